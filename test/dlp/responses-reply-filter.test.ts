import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../src/chat/types.ts';
import { DlpGuard, type DlpGuardOptions } from '../../src/dlp/dlp-guard.ts';
import { ResponsesReplyFilter } from '../../src/dlp/responses-reply-filter.ts';
import { PiiDetectedError } from '../../src/errors/catalog.ts';
import type { Untyped } from '../support/untyped.ts';

/** The reply side of DLP on a native Responses upstream's `response` objects and events. */

const EMAIL = 'jane.doe@example.com';
const request: ChatRequest = { model: 'm', n: 1, stream: true, include_usage: false, messages: [] };

function filterOf(options: DlpGuardOptions): ResponsesReplyFilter {
  const { reply } = new DlpGuard(options).screenExchange(request, {});
  if (!reply) throw new Error('no reply filter');
  return new ResponsesReplyFilter(reply);
}

const response = (): Untyped => ({
  id: 'resp_1',
  object: 'response',
  output: [
    { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: `mail ${EMAIL}?` }] },
    { id: 'fc_1', type: 'function_call', call_id: 'c1', name: 'send', arguments: JSON.stringify({ to: EMAIL }) },
    { id: 'msg_1', type: 'message', content: [{ type: 'refusal', refusal: `not to ${EMAIL}` }] },
  ],
});

describe('ResponsesReplyFilter', () => {
  it('redacts summaries, function call arguments and refusals of a whole response, arguments still JSON', async () => {
    const out = JSON.parse(
      await filterOf({ action: 'redact', scanReplies: true }).completionAsync(JSON.stringify(response())),
    ) as Untyped;
    expect(JSON.stringify(out)).not.toContain(EMAIL);
    expect(out.output[0].summary[0].text).toBe('mail <EMAIL_ADDRESS_1>?');
    expect(JSON.parse(out.output[1].arguments)).toEqual({ to: '<EMAIL_ADDRESS_1>' });
    expect(out.output[2].content[0].refusal).toBe('not to <EMAIL_ADDRESS_1>');
  });

  it('holds streamed argument deltas back and releases them, redacted, before their done event', async () => {
    const filter = filterOf({ action: 'redact', scanReplies: true });
    const args = JSON.stringify({ to: EMAIL });
    const sent: Untyped[] = [];
    const feed = async (event: Untyped) => {
      const lines = await filter.chunkAsync(JSON.stringify(event));
      for (const line of lines.split('\n')) if (line !== '') sent.push(JSON.parse(line));
    };
    for (const piece of [args.slice(0, 10), args.slice(10)])
      await feed({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, delta: piece });
    await feed({ type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 0, arguments: args });
    await feed({
      type: 'response.output_item.done',
      output_index: 0,
      item: { id: 'fc_1', type: 'function_call', arguments: args },
    });
    expect(sent.map((e) => e.type)).toEqual([
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
    ]);
    expect(JSON.parse(sent[0].delta)).toEqual({ to: '<EMAIL_ADDRESS_1>' });
    expect(sent[1].arguments).toBe(sent[0].delta);
    expect(sent[2].item.arguments).toBe(sent[0].delta);
  });

  it('blocks a reply with personal data in block mode', async () => {
    await expect(
      filterOf({ action: 'block', scanReplies: true }).completionAsync(JSON.stringify(response())),
    ).rejects.toBeInstanceOf(PiiDetectedError);
  });
});
