import { chunkOf, textLiteralOf } from '../../chat/chunk-text.ts';
import type { AnthropicBlockPiece, ChatCompletionChunk, FinishReason, ToolCallDelta, Usage } from '../../chat/types.ts';
import type { GatewayError } from '../../errors/catalog.ts';
import { errorBodyOf } from './errors.ts';
import { messageIdOf, stopReasonOf, usageOf } from './reply-encoding.ts';

/**
 * `chat.completion.chunk`s as Anthropic's streaming event grammar:
 * `message_start`, `ping`, then per content block `content_block_start`,
 * its deltas (`text_delta`, `input_json_delta`, `thinking_delta`,
 * `signature_delta`, and what an Anthropic-format upstream sent that the
 * gateway does not model, such as server-tool blocks and `citations_delta`,
 * unchanged) and `content_block_stop`, then `message_delta` (stop
 * reason, usage) and `message_stop`. Blocks are opened and closed one at a
 * time, in the order the pieces arrive. The stop reason is held until the end
 * because the usage chunk comes after the finish chunk; input tokens are only
 * known then, so `message_start` says 0 and `message_delta` carries the
 * count (the SDKs take it from there).
 */

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

// The frames every reply sends, written as text: they are most of a short reply's frames, and
// building and serializing their objects cost the door more than the chat door spends in all.
const PING = frame('ping', { type: 'ping' });
const MESSAGE_STOP = frame('message_stop', { type: 'message_stop' });
const EMPTY_USAGE = '{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}';

function messageStart(id: string, model: string): string {
  const message = `{"id":${JSON.stringify(id)},"type":"message","role":"assistant","model":${JSON.stringify(model)},"content":[],"stop_reason":null,"stop_sequence":null,"usage":${EMPTY_USAGE}}`;
  return `event: message_start\ndata: {"type":"message_start","message":${message}}\n\n${PING}`;
}

function blockStop(index: number): string {
  return `event: content_block_stop\ndata: {"type":"content_block_stop","index":${index}}\n\n`;
}

/** A text_delta frame; `literal` is the text as a JSON string literal. */
function textDelta(index: number, literal: string): string {
  return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"text_delta","text":${literal}}}\n\n`;
}

const TEXT_BLOCK = '{"type":"text","text":""}';

type OpenBlock =
  { kind: 'text' } | { kind: 'thinking'; index: number } | { kind: 'tool'; index: number } | { kind: 'carried' };

export class MessagesStreamEncoder {
  readonly #model: string | undefined;
  #started = false;
  #blockCount = 0;
  #open: OpenBlock | undefined;
  /** Content block index of each tool call index, and of each thinking block index. */
  readonly #toolBlocks = new Map<number, number>();
  readonly #thinkingBlocks = new Map<number, number>();
  #finish: FinishReason | null = null;
  #stopSequence: string | undefined;
  #usage: Usage | undefined;
  #ended = false;

  constructor(requestedModel: string | undefined) {
    this.#model = requestedModel;
  }

  /** Frames for one chunk's JSON text. */
  chunk(json: string): string {
    // Most chunks of a reply carry only text: no parse for those once the message started.
    if (this.#started) {
      const literal = textLiteralOf(json);
      if (literal !== undefined) return literal === '""' ? '' : this.#text(literal);
    }
    const chunk = chunkOf(json);
    let out = this.#start(chunk.id, chunk.model);
    if (chunk.usage) this.#usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return out;
    const delta = choice.delta ?? {};
    if (delta.thinking) out += this.#thinking(delta.thinking);
    if (delta.anthropic_block) out += this.#carried(delta.anthropic_block);
    const text = (delta.content ?? '') + (delta.refusal ?? '');
    if (text !== '') out += this.#text(JSON.stringify(text));
    for (const piece of delta.tool_calls ?? []) out += this.#toolPiece(piece);
    if (choice.finish_reason) this.#finish = choice.finish_reason;
    if (choice.stop_sequence) this.#stopSequence = choice.stop_sequence;
    return out;
  }

  /** Frames that close a stream that ended cleanly. */
  end(): string {
    if (this.#ended) return '';
    this.#ended = true;
    let out = this.#start('', '');
    out += this.#closeBlock();
    const stopReason = stopReasonOf(this.#finish, this.#stopSequence);
    const stopSequence = this.#stopSequence === undefined ? 'null' : JSON.stringify(this.#stopSequence);
    out += `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"${stopReason}","stop_sequence":${stopSequence}},"usage":${JSON.stringify(usageOf(this.#usage))}}\n\n`;
    out += MESSAGE_STOP;
    return out;
  }

  /** The `error` event of a stream that fails after its first frame; no message_stop follows, so no client takes it for a whole reply. */
  fail(err: GatewayError, requestId: string): string {
    this.#ended = true;
    return frame('error', errorBodyOf(err, requestId));
  }

  #start(id: string, model: string): string {
    if (this.#started) return '';
    this.#started = true;
    return messageStart(messageIdOf(id), this.#model ?? model);
  }

  #closeBlock(): string {
    if (this.#open === undefined) return '';
    this.#open = undefined;
    return blockStop(this.#blockCount - 1);
  }

  /** `contentBlock`: the block's JSON text. */
  #openBlock(open: OpenBlock, contentBlock: string): string {
    const out = this.#closeBlock();
    this.#open = open;
    const index = this.#blockCount++;
    return `${out}event: content_block_start\ndata: {"type":"content_block_start","index":${index},"content_block":${contentBlock}}\n\n`;
  }

  /** Text for the open text block, or a new one; `literal` is the text as a JSON string literal. */
  #text(literal: string): string {
    const out = this.#open?.kind === 'text' ? '' : this.#openBlock({ kind: 'text' }, TEXT_BLOCK);
    return out + textDelta(this.#blockCount - 1, literal);
  }

  #thinking(piece: NonNullable<NonNullable<ChatCompletionChunk['choices'][number]['delta']>['thinking']>): string {
    let out = '';
    let index = this.#thinkingBlocks.get(piece.index);
    if (index === undefined) {
      const block =
        piece.type === 'redacted_thinking'
          ? { type: 'redacted_thinking', data: piece.data ?? '' }
          : { type: 'thinking', thinking: '', signature: '' };
      out += this.#openBlock({ kind: 'thinking', index: piece.index }, JSON.stringify(block));
      index = this.#blockCount - 1;
      this.#thinkingBlocks.set(piece.index, index);
      if (piece.type === 'redacted_thinking') return out;
    }
    if (piece.thinking)
      out += frame('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'thinking_delta', thinking: piece.thinking },
      });
    if (piece.signature)
      out += frame('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'signature_delta', signature: piece.signature },
      });
    return out;
  }

  /** An upstream's block or delta the chunk carried unchanged (Anthropic-format upstreams): in order, as it came. */
  #carried(piece: AnthropicBlockPiece): string {
    let out = '';
    if (piece.start) out += this.#openBlock({ kind: 'carried' }, JSON.stringify(piece.start));
    else if (piece.text && this.#open?.kind !== 'text') out += this.#openBlock({ kind: 'text' }, TEXT_BLOCK);
    // A delta for a block no longer open (the upstream interleaved blocks) has nowhere to go.
    const open = this.#open?.kind;
    if (piece.delta && (open === 'carried' || (piece.text && open === 'text')))
      out += frame('content_block_delta', {
        type: 'content_block_delta',
        index: this.#blockCount - 1,
        delta: piece.delta,
      });
    return out;
  }

  #toolPiece(piece: ToolCallDelta): string {
    let out = '';
    let index = this.#toolBlocks.get(piece.index);
    if (index === undefined) {
      out += this.#openBlock(
        { kind: 'tool', index: piece.index },
        JSON.stringify({
          type: 'tool_use',
          id: piece.id ?? `toolu_${piece.index}`,
          name: piece.function?.name ?? '',
          input: {},
        }),
      );
      index = this.#blockCount - 1;
      this.#toolBlocks.set(piece.index, index);
    }
    const args = piece.function?.arguments;
    if (args)
      out += frame('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: args },
      });
    return out;
  }
}
