import type { DlpGuard } from '../../dlp/dlp-guard.ts';
import { ResponsesReplyFilter } from '../../dlp/responses-reply-filter.ts';
import { errorCodeOf } from '../../observability/tracing/trace-span.ts';
import type { Exchange } from '../exchange.ts';

/**
 * DLP: every text is scanned before the caches, the queue and the provider
 * see it (block mode throws `pii_detected`), in a span of its own that counts
 * the findings, never their values. The reply filter is set only with
 * DLP_SCAN_REPLIES or DLP_RESTORE: otherwise replies are relayed untouched.
 */
export async function screenStep(exchange: Exchange, dlp: DlpGuard): Promise<void> {
  const { context } = exchange;
  const span = context.span.child('dlp');
  try {
    // Asynchronous only with a DLP analyzer (DLP_ANALYZER_URL); without one it resolves at once.
    const screened = await dlp.screenExchangeAsync(exchange.request, context);
    exchange.request = screened.request;
    // Vectors hold no text; a native Responses reply is read in its own shape.
    const kind = exchange.kind?.type ?? 'chat';
    exchange.replyFilter =
      kind === 'chat'
        ? screened.reply
        : kind === 'responses' && screened.reply
          ? new ResponsesReplyFilter(screened.reply)
          : undefined;
    // Blocks passed through as the upstream wrote them are never scanned: with reply scanning on,
    // the Messages client gets the reply rebuilt from what was scanned instead.
    if (exchange.replyFilter && exchange.request.anthropic_reply_blocks) {
      const { anthropic_reply_blocks: _unscanned, ...scannable } = exchange.request;
      exchange.request = scannable;
    }
    if (span.recording)
      span.set(
        'gateway.dlp.findings',
        Object.values(context.dlpFindings ?? {}).reduce((sum, n) => sum + n, 0),
      );
  } catch (err) {
    span.fail(errorCodeOf(err));
    throw err;
  } finally {
    span.end();
  }
}
