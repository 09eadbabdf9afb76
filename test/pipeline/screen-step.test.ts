import { describe, expect, it } from 'vitest';
import { normalizeChatRequest } from '../../src/chat/request-schema.ts';
import type { ChatRequest } from '../../src/chat/types.ts';
import { DlpGuard } from '../../src/dlp/dlp-guard.ts';
import type { Exchange } from '../../src/pipeline/exchange.ts';
import { newContext } from '../../src/pipeline/request-context.ts';
import { screenStep } from '../../src/pipeline/steps/screen-step.ts';

/** The DLP step of the pipeline on a Messages-door request that asks for the upstream's own reply blocks. */
function exchangeOf(request: ChatRequest): Exchange {
  return { context: newContext('req-screen'), request } as unknown as Exchange;
}

const withBlocks = (): ChatRequest => ({
  ...normalizeChatRequest({ model: 'c-3', messages: [{ role: 'user', content: 'Search it' }] } as never),
  anthropic_reply_blocks: true,
});

describe('screenStep', () => {
  it('keeps the request for the upstream reply blocks while replies are not scanned', async () => {
    const exchange = exchangeOf(withBlocks());
    await screenStep(exchange, new DlpGuard({}));
    expect(exchange.replyFilter).toBeUndefined();
    expect(exchange.request.anthropic_reply_blocks).toBe(true);
  });

  it('drops it when replies are scanned, so no unscanned block reaches the client', async () => {
    const exchange = exchangeOf(withBlocks());
    await screenStep(exchange, new DlpGuard({ scanReplies: true }));
    expect(exchange.replyFilter).toBeDefined();
    expect(exchange.request.anthropic_reply_blocks).toBeUndefined();
    expect(exchange.request.messages).toEqual(withBlocks().messages);
  });
});
