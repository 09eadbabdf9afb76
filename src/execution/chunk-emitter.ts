import type { ChatCompletionChunk, ChunkDelta, FinishReason, Usage } from '../chat/types.ts';
import type { StreamDelta } from '../providers/types.ts';

/**
 * Turns normalized stream deltas into OpenAI `chat.completion.chunk` JSON.
 * The first chunk of each choice carries `role: "assistant"`; when the client
 * asked for `include_usage`, chunks carry `usage: null` and a last chunk with
 * empty `choices` carries the totals, as OpenAI does.
 */
export class ChunkEmitter {
  private readonly started = new Set<number>();
  private readonly finished = new Set<number>();

  private readonly id: string;
  private readonly created: number;
  private readonly model: string;
  private readonly includeUsage: boolean;
  private readonly write: (json: string) => void;

  constructor(id: string, created: number, model: string, includeUsage: boolean, write: (json: string) => void) {
    this.id = id;
    this.created = created;
    this.model = model;
    this.includeUsage = includeUsage;
    this.write = write;
  }

  /** Choices that have received a finish reason. */
  get finishedChoices(): number {
    return this.finished.size;
  }

  /** Emits one delta as choice `choice` (the caller renumbers fanned-out calls). */
  delta(choice: number, event: Omit<StreamDelta, 'kind' | 'choice'>): void {
    const { content, refusal, tool_calls: toolCalls, thinking, finish_reason: finishReason } = event;
    const carried = event.anthropic_block;
    if (
      content === undefined &&
      refusal === undefined &&
      toolCalls === undefined &&
      thinking === undefined &&
      carried === undefined &&
      finishReason === undefined
    )
      return;
    const delta: ChunkDelta = {};
    if (!this.started.has(choice)) {
      this.started.add(choice);
      delta.role = 'assistant';
    }
    if (content !== undefined) delta.content = content;
    if (refusal !== undefined) delta.refusal = refusal;
    if (toolCalls !== undefined) delta.tool_calls = toolCalls;
    if (thinking !== undefined) delta.thinking = thinking;
    if (carried !== undefined) delta.anthropic_block = carried;
    if (finishReason !== undefined) this.finished.add(choice);
    const out: ChatCompletionChunk['choices'][number] = {
      index: choice,
      delta,
      finish_reason: finishReason ?? null,
      logprobs: event.logprobs ?? null,
    };
    if (finishReason !== undefined && event.stop_sequence !== undefined) out.stop_sequence = event.stop_sequence;
    this.emit([out]);
  }

  /** Closes every choice in `0..n-1` that has no finish reason yet. */
  finishAll(n: number, reason: FinishReason = 'stop'): void {
    for (let i = 0; i < n; i++) if (!this.finished.has(i)) this.delta(i, { finish_reason: reason });
  }

  usage(usage: Usage): void {
    if (!this.includeUsage) return;
    this.emit([], usage);
  }

  private emit(choices: ChatCompletionChunk['choices'], usage?: Usage): void {
    const chunk: ChatCompletionChunk = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices,
    };
    if (this.includeUsage) chunk.usage = usage ?? null;
    this.write(JSON.stringify(chunk));
  }
}
