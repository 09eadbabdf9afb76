import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionChunkChoice,
  ChatCompletionChoice,
  FinishReason,
  ReplyMessage,
  ThinkingBlock,
  ToolCall,
  Usage,
} from './types.ts';

/**
 * Chunks <-> completion, the two directions of one mapping. The accumulator
 * rebuilds the `chat.completion` a stream of `chat.completion.chunk`s amounts
 * to, as OpenAI's SDK does (text, refusal and tool-call argument fragments
 * concatenated per choice and per tool-call index); {@link completionChunks}
 * replays a completion as chunks. Every place that assembles or replays a
 * reply goes through here, so a streamed and a non-streamed reply of the same
 * answer are the same object.
 */

interface ChoiceState {
  content: string[];
  refusal: string[];
  /** By tool-call index. */
  toolCalls: Map<number, { id: string; name: string; args: string[] }>;
  /** Reasoning blocks by their index: pieces of text and signature, or a redacted block's data. */
  thinking: Map<number, { type: ThinkingBlock['type']; thinking: string[]; signature: string[]; data: string }>;
  logprobs: { content: unknown[]; refusal: unknown[] } | undefined;
  finish: FinishReason | undefined;
  stopSequence: string | undefined;
}

function newChoice(): ChoiceState {
  return {
    content: [],
    refusal: [],
    toolCalls: new Map(),
    thinking: new Map(),
    logprobs: undefined,
    finish: undefined,
    stopSequence: undefined,
  };
}

/** OpenAI streams logprobs as `{content: [...], refusal: [...]}` per chunk; they concatenate. */
function addLogprobs(state: ChoiceState, logprobs: unknown): void {
  if (typeof logprobs !== 'object' || logprobs === null) return;
  const { content, refusal } = logprobs as { content?: unknown; refusal?: unknown };
  state.logprobs ??= { content: [], refusal: [] };
  if (Array.isArray(content)) state.logprobs.content.push(...content);
  if (Array.isArray(refusal)) state.logprobs.refusal.push(...refusal);
}

export class CompletionAccumulator {
  private id = '';
  private created = 0;
  private model = '';
  private usage: Usage | undefined;
  private readonly choices = new Map<number, ChoiceState>();

  /** Feeds one chunk, in stream order. */
  push(chunk: ChatCompletionChunk): void {
    this.id ||= chunk.id;
    this.created ||= chunk.created;
    this.model ||= chunk.model;
    if (chunk.usage) this.usage = chunk.usage;
    for (const choice of chunk.choices ?? []) this.pushChoice(choice);
  }

  private pushChoice(choice: ChatCompletionChunkChoice): void {
    let state = this.choices.get(choice.index);
    if (!state) {
      state = newChoice();
      this.choices.set(choice.index, state);
    }
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content !== '') state.content.push(delta.content);
    if (typeof delta.refusal === 'string' && delta.refusal !== '') state.refusal.push(delta.refusal);
    for (const piece of delta.tool_calls ?? []) {
      let call = state.toolCalls.get(piece.index);
      if (!call) {
        call = { id: '', name: '', args: [] };
        state.toolCalls.set(piece.index, call);
      }
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.name += piece.function.name;
      if (piece.function?.arguments) call.args.push(piece.function.arguments);
    }
    const piece = delta.thinking;
    if (piece) {
      let block = state.thinking.get(piece.index);
      if (!block) {
        block = { type: piece.type ?? 'thinking', thinking: [], signature: [], data: '' };
        state.thinking.set(piece.index, block);
      }
      if (piece.thinking) block.thinking.push(piece.thinking);
      if (piece.signature) block.signature.push(piece.signature);
      if (piece.data) block.data += piece.data;
    }
    if (choice.logprobs != null) addLogprobs(state, choice.logprobs);
    if (choice.finish_reason) state.finish = choice.finish_reason;
    if (choice.stop_sequence) state.stopSequence = choice.stop_sequence;
  }

  /** Sets the token counts when they travel beside the chunks (the reply stream's `end` entry). */
  setUsage(usage: Usage): void {
    this.usage = usage;
  }

  /** True when choices `0..n-1` all exist and all have a finish reason: a reply cut short is not complete. */
  isComplete(n: number): boolean {
    if (this.choices.size !== n) return false;
    for (let i = 0; i < n; i++) if (this.choices.get(i)?.finish === undefined) return false;
    return true;
  }

  completion(): ChatCompletion {
    const indexes = [...this.choices.keys()].sort((a, b) => a - b);
    const choices: ChatCompletionChoice[] = indexes.map((index) => {
      const state = this.choices.get(index) as ChoiceState;
      const message: ReplyMessage = { role: 'assistant', content: null };
      const toolCalls: ToolCall[] = [...state.toolCalls.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, call]) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.args.join('') },
        }));
      if (state.content.length > 0 || (toolCalls.length === 0 && state.refusal.length === 0))
        message.content = state.content.join('');
      if (state.refusal.length > 0) message.refusal = state.refusal.join('');
      if (toolCalls.length > 0) message.tool_calls = toolCalls;
      if (state.thinking.size > 0) {
        message.thinking = [...state.thinking.entries()]
          .sort(([a], [b]) => a - b)
          .map(([, block]): ThinkingBlock =>
            block.type === 'redacted_thinking'
              ? { type: 'redacted_thinking', data: block.data }
              : { type: 'thinking', thinking: block.thinking.join(''), signature: block.signature.join('') },
          );
      }
      const out: ChatCompletionChoice = {
        index,
        message,
        finish_reason: state.finish ?? 'stop',
        logprobs: state.logprobs ?? null,
      };
      if (state.stopSequence !== undefined) out.stop_sequence = state.stopSequence;
      return out;
    });
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      choices,
      usage: this.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    };
  }
}

/**
 * The chunks that replay a stored completion as a stream: per choice a role
 * chunk, one content (or refusal) chunk, one chunk per tool call (id, name and
 * whole arguments) and a finish chunk, then a usage chunk when the client
 * asked for `include_usage` (with `usage: null` on the others, as OpenAI
 * sends them). Text is sent whole: it is already there, splitting it would
 * only add bytes.
 */
export function completionChunks(completion: ChatCompletion, includeUsage: boolean): ChatCompletionChunk[] {
  const base = {
    id: completion.id,
    object: 'chat.completion.chunk' as const,
    created: completion.created,
    model: completion.model,
  };
  const chunk = (choices: ChatCompletionChunk['choices'], usage?: Usage): ChatCompletionChunk => {
    const out: ChatCompletionChunk = { ...base, choices };
    if (includeUsage) out.usage = usage ?? null;
    return out;
  };
  const chunks: ChatCompletionChunk[] = [];
  for (const choice of completion.choices) {
    const { index, message } = choice;
    chunks.push(chunk([{ index, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null }]));
    for (const [i, block] of (message.thinking ?? []).entries()) {
      const thinking =
        block.type === 'redacted_thinking'
          ? { index: i, type: block.type, data: block.data }
          : { index: i, type: block.type, thinking: block.thinking, signature: block.signature };
      chunks.push(chunk([{ index, delta: { thinking }, finish_reason: null, logprobs: null }]));
    }
    if (message.content)
      chunks.push(
        chunk([{ index, delta: { content: message.content }, finish_reason: null, logprobs: choice.logprobs ?? null }]),
      );
    if (message.refusal)
      chunks.push(chunk([{ index, delta: { refusal: message.refusal }, finish_reason: null, logprobs: null }]));
    for (const [i, call] of (message.tool_calls ?? []).entries()) {
      const delta = {
        tool_calls: [
          {
            index: i,
            id: call.id,
            type: 'function' as const,
            function: { name: call.function.name, arguments: call.function.arguments },
          },
        ],
      };
      chunks.push(chunk([{ index, delta, finish_reason: null, logprobs: null }]));
    }
    const finish: ChatCompletionChunkChoice = { index, delta: {}, finish_reason: choice.finish_reason, logprobs: null };
    if (choice.stop_sequence !== undefined) finish.stop_sequence = choice.stop_sequence;
    chunks.push(chunk([finish]));
  }
  if (includeUsage) chunks.push(chunk([], completion.usage));
  return chunks;
}
