import { usageOf } from '../chat/token-usage.ts';
import { CompletionAccumulator } from '../chat/completion-accumulator.ts';
import type { ChatCompletionChunk } from '../chat/types.ts';
import type { StreamEntry } from '../streams/protocol.ts';

/**
 * Rebuilds the `chat.completion` a reply stream amounts to, so streamed and
 * non-streamed replies are stored alike. Only a complete reply yields one: a
 * `result` entry, or chunks closed by `end` with every choice finished. A
 * stream that failed (`error`) or was cut (no terminal entry) never does, so
 * it is never cached. Nor does a reply carrying an Anthropic-format
 * upstream's own blocks for the Messages door (`anthropic_content`,
 * `anthropic_block`): a stream would replay it without them, and a request
 * of another door with the same key would be served them.
 */
export class ReplyAssembler {
  private result: string | undefined;
  private complete = false;
  private failed = false;
  private readonly accumulator = new CompletionAccumulator();

  private readonly choices: number;

  /** @param choices the `n` of the request: a streamed reply must close every one of them. */
  constructor(choices: number) {
    this.choices = choices;
  }

  /** Feeds one entry of the reply stream, in order. */
  push(entry: StreamEntry): void {
    if (this.failed || this.complete) return;
    switch (entry.t) {
      case 'result':
        this.result = entry.d;
        this.complete = true;
        if (entry.d.includes('"anthropic_content":')) this.failed = true;
        return;
      case 'error':
        this.failed = true;
        return;
      case 'end': {
        // Token types absent from the entry were 0 (the protocol leaves zeros out).
        this.accumulator.setUsage(
          usageOf({
            prompt: entry.pt ?? 0,
            completion: entry.ct ?? 0,
            cachedRead: entry.cr,
            cacheWrite: entry.cw,
            cacheWrite1h: entry.ch,
            reasoning: entry.rt,
          }),
        );
        this.complete = true;
        return;
      }
      case 'chunk':
        try {
          const chunk = JSON.parse(entry.d) as ChatCompletionChunk;
          if (chunk.choices.some((choice) => choice.delta.anthropic_block !== undefined)) this.failed = true;
          else this.accumulator.push(chunk);
        } catch {
          this.failed = true;
        }
        return;
    }
  }

  /** The complete reply as `chat.completion` JSON; undefined while incomplete or after a failure. */
  completion(): string | undefined {
    if (this.failed || !this.complete) return undefined;
    if (this.result !== undefined) return this.result;
    if (!this.accumulator.isComplete(this.choices)) return undefined;
    return JSON.stringify(this.accumulator.completion());
  }
}

/** Final states of a native Responses reply worth replaying: `failed` never is. */
const REPLAYABLE = new Set(['completed', 'incomplete']);

/**
 * The `response` object a native Responses reply amounts to (a provider with
 * `responses_api: native`): the `result` entry's, or the one the terminal
 * event of a stream carries (`response.completed`, `response.incomplete`),
 * once the stream ended cleanly. A failed response, a stream that failed or
 * was cut, or an event that is not JSON yields none.
 */
export class ResponsesReplyAssembler {
  private final: string | undefined;
  private complete = false;
  private failed = false;

  push(entry: StreamEntry): void {
    if (this.failed || this.complete) return;
    switch (entry.t) {
      case 'result':
        this.final = replayable(entry.d);
        this.complete = true;
        return;
      case 'error':
        this.failed = true;
        return;
      case 'end':
        this.complete = true;
        return;
      case 'chunk': {
        try {
          const event = JSON.parse(entry.d) as { type?: unknown; response?: unknown };
          if (event.type === 'response.completed' || event.type === 'response.incomplete')
            this.final = replayable(JSON.stringify(event.response));
        } catch {
          this.failed = true;
        }
        return;
      }
    }
  }

  completion(): string | undefined {
    return this.failed || !this.complete ? undefined : this.final;
  }
}

function replayable(json: string): string | undefined {
  try {
    const response = JSON.parse(json) as { object?: unknown; status?: unknown; output?: unknown };
    return response.object === 'response' && REPLAYABLE.has(String(response.status)) && Array.isArray(response.output)
      ? json
      : undefined;
  } catch {
    return undefined;
  }
}
