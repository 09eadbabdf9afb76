import type { ChatCompletion, ChatCompletionChunk, FinishReason } from '../chat/types.ts';
import type { StreamEntry } from '../streams/protocol.ts';

/**
 * Rebuilds the `chat.completion` a reply stream amounts to, so streamed and
 * non-streamed replies are stored alike. Only a complete reply yields one: a
 * `result` entry, or chunks closed by `end`. A stream that failed (`error`)
 * or was cut (no terminal entry) never does, so it is never cached.
 */
export class ReplyAssembler {
  private result: string | undefined;
  private complete = false;
  private failed = false;
  private id = '';
  private created = 0;
  private model = '';
  private readonly contents = new Map<number, string[]>();
  private readonly finishReasons = new Map<number, FinishReason>();
  private promptTokens = 0;
  private completionTokens = 0;

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
        return;
      case 'error':
        this.failed = true;
        return;
      case 'end':
        this.promptTokens = entry.pt ?? 0;
        this.completionTokens = entry.ct ?? 0;
        this.complete = true;
        return;
      case 'chunk':
        this.addChunk(entry.d);
        return;
    }
  }

  private addChunk(json: string): void {
    let chunk: ChatCompletionChunk;
    try {
      chunk = JSON.parse(json) as ChatCompletionChunk;
    } catch {
      this.failed = true;
      return;
    }
    this.id ||= chunk.id;
    this.created ||= chunk.created;
    this.model ||= chunk.model;
    for (const choice of chunk.choices ?? []) {
      const content = choice.delta?.content;
      if (typeof content === 'string' && content.length > 0) {
        const parts = this.contents.get(choice.index) ?? [];
        parts.push(content);
        this.contents.set(choice.index, parts);
      } else if (!this.contents.has(choice.index)) {
        this.contents.set(choice.index, []);
      }
      if (choice.finish_reason) this.finishReasons.set(choice.index, choice.finish_reason);
    }
  }

  /** The complete reply as `chat.completion` JSON; undefined while incomplete or after a failure. */
  completion(): string | undefined {
    if (this.failed || !this.complete) return undefined;
    if (this.result !== undefined) return this.result;
    const indexes = [...this.contents.keys()].sort((a, b) => a - b);
    // A missing choice, or one without a finish reason, was cut short: not a reply worth keeping.
    if (indexes.length !== this.choices || indexes.some((i) => !this.finishReasons.has(i))) return undefined;
    const completion: ChatCompletion = {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      choices: indexes.map((index) => ({
        index,
        message: { role: 'assistant', content: (this.contents.get(index) ?? []).join('') },
        finish_reason: this.finishReasons.get(index) as FinishReason,
        logprobs: null,
      })),
      usage: {
        prompt_tokens: this.promptTokens,
        completion_tokens: this.completionTokens,
        total_tokens: this.promptTokens + this.completionTokens,
      },
    };
    return JSON.stringify(completion);
  }
}
