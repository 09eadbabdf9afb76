import type { Response } from 'express';
import type { ChatRequest } from '../../chat/types.ts';
import type { KeyGovernor } from '../../usage/key-governor.ts';
import { contextOf } from '../request-context.ts';

/**
 * Runs a miss's dispatch and relay under the key's token limit and budget:
 * admitted before (a cache hit, answered earlier, costs nothing), charged
 * after with the usage the reply reported, for the model that answered.
 */
export async function governed(governor: KeyGovernor | undefined, res: Response, request: ChatRequest, work: () => Promise<void>): Promise<void> {
  const call = await governor?.admit(contextOf(res).principal, request);
  try {
    await work();
  } finally {
    if (call) void governor!.finish(call, callOutcome(res, request.model));
  }
}

/** What the reply facts say about the call, for the governor. */
function callOutcome(res: Response, requested: string) {
  const context = contextOf(res);
  const facts = context.reply;
  const reported = facts?.promptTokens !== undefined || facts?.completionTokens !== undefined;
  return {
    model: context.model ?? requested,
    usage: reported
      ? {
          promptTokens: facts?.promptTokens ?? 0,
          completionTokens: facts?.completionTokens ?? 0,
          cachedReadTokens: facts?.cachedReadTokens ?? 0,
          cacheWriteTokens: facts?.cacheWriteTokens ?? 0,
          cacheWrite1hTokens: facts?.cacheWrite1hTokens ?? 0,
          reasoningTokens: facts?.reasoningTokens ?? 0,
        }
      : undefined,
    // Never dispatched, or ended in an error entry: nothing was produced upstream to charge.
    failed: !facts || facts.terminal === 'error',
    coalesced: facts?.coalesced ?? false,
  };
}
