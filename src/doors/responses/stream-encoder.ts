import { textLiteralOf } from '../../chat/chunk-text.ts';
import type {
  ChatCompletionChunk,
  FinishReason,
  ReplyMessage,
  ThinkingBlock,
  ThinkingDelta,
  ToolCall,
} from '../../chat/types.ts';
import type { GatewayError } from '../../errors/catalog.ts';
import { newItemId } from './ids.ts';
import { encryptedContentOf, newReasoningId, type ReasoningItem } from './reasoning-items.ts';
import {
  responseObject,
  responseUsage,
  statusOf,
  type ChatUsageJson,
  type FunctionCallItem,
  type MessageItem,
  type OutputItem,
  type ResponseFacts,
  type ResponseUsage,
} from './response-object.ts';

/**
 * Turns the pipeline's `chat.completion.chunk` stream into the Responses
 * event grammar: `response.created`, `response.in_progress`, then per output
 * item `output_item.added`, its parts and deltas (a reasoning block's text as
 * `response.reasoning_summary_text.delta`), `output_item.done`, and
 * `response.completed` (or `response.incomplete`); every event numbered by
 * `sequence_number`. A tool call is done when the next one starts (chat
 * streams send calls one after the other) or at the end.
 */
export class ResponseStreamEncoder {
  private facts: ResponseFacts;
  private seq = 0;
  private started = false;
  private readonly output: OutputItem[] = [];
  /** The open message item: its output index and which part (text or refusal) is open. */
  private message:
    { index: number; item: MessageItem; part: 'output_text' | 'refusal' | undefined; text: string } | undefined;
  /** The open reasoning item: the chat stream's block index, its output index, the block so far, whether its summary part is open. */
  private reasoning:
    { block: number; index: number; item: ReasoningItem; sent: ThinkingBlock; part: boolean } | undefined;
  /** Reasoning blocks of the reply, in order, for the stored turn. */
  private readonly thinking: ThinkingBlock[] = [];
  /** Open function calls by the chat stream's tool-call index. */
  private readonly calls = new Map<number, { index: number; item: FunctionCallItem; done: boolean }>();
  private finish: FinishReason | null = null;
  private usage: ResponseUsage | null = null;
  private finalResponse: Record<string, unknown> | undefined;

  constructor(facts: ResponseFacts) {
    this.facts = facts;
  }

  /** The last `response` object sent (after a clean end), for storing. */
  get final(): Record<string, unknown> | undefined {
    return this.finalResponse;
  }

  /** The assistant turn as the canonical reply message (for later `previous_response_id` turns). */
  replyMessage(): ReplyMessage {
    let content: string | null = null;
    const tool_calls: ToolCall[] = [];
    for (const item of this.output) {
      if (item.type === 'function_call')
        tool_calls.push({
          id: item.call_id,
          type: 'function',
          function: { name: item.name, arguments: item.arguments },
        });
      else if (item.type === 'message')
        for (const part of item.content) if (part.type === 'output_text') content = (content ?? '') + part.text;
    }
    const message: ReplyMessage =
      tool_calls.length > 0 ? { role: 'assistant', content, tool_calls } : { role: 'assistant', content };
    if (this.thinking.length > 0) message.thinking = this.thinking;
    return message;
  }

  private event(type: string, fields: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: this.seq++ })}\n\n`;
  }

  /** An event whose one field is JSON text already: the opening's response object is serialized once for both of its events. */
  private eventOfJson(type: string, field: string, json: string): string {
    return `event: ${type}\ndata: {"type":"${type}","${field}":${json},"sequence_number":${this.seq++}}\n\n`;
  }

  private opening(): string {
    if (this.started) return '';
    this.started = true;
    const response = JSON.stringify(responseObject(this.facts, { status: 'in_progress', output: [] }));
    return (
      this.eventOfJson('response.created', 'response', response) +
      this.eventOfJson('response.in_progress', 'response', response)
    );
  }

  chunk(json: string): string {
    // Most chunks of a reply carry text for the output_text part already open: only their text is parsed.
    if (this.message?.part === 'output_text') {
      const literal = textLiteralOf(json);
      if (literal !== undefined)
        return literal === '""' ? '' : this.text('output_text', JSON.parse(literal) as string, literal);
    }
    const chunk = JSON.parse(json) as ChatCompletionChunk & { usage?: ChatUsageJson | null };
    // The model that answered: a fallback's when the requested one's deployments failed.
    if (!this.started && chunk.model) this.facts = { ...this.facts, model: chunk.model };
    let frames = this.opening();
    if (chunk.usage) this.usage = responseUsage(chunk.usage);
    const choice = chunk.choices.find((c) => c.index === 0);
    if (!choice) return frames;
    const delta = choice.delta;
    if (delta.thinking) frames += this.thought(delta.thinking);
    if (delta.content) frames += this.text('output_text', delta.content);
    if (delta.refusal) frames += this.text('refusal', delta.refusal);
    for (const piece of delta.tool_calls ?? []) {
      let call = this.calls.get(piece.index);
      if (!call) {
        frames += this.closeReasoning() + this.closeMessage() + this.closeCalls();
        const item: FunctionCallItem = {
          type: 'function_call',
          id: newItemId('fc'),
          call_id: piece.id ?? `call_${newItemId('fc').slice(3)}`,
          name: piece.function?.name ?? '',
          arguments: '',
          status: 'in_progress',
        };
        call = { index: this.output.length, item, done: false };
        this.calls.set(piece.index, call);
        this.output.push(item);
        frames += this.event('response.output_item.added', { output_index: call.index, item: { ...item } });
      }
      const args = piece.function?.arguments;
      if (args) {
        call.item.arguments += args;
        frames += this.event('response.function_call_arguments.delta', {
          item_id: call.item.id,
          output_index: call.index,
          delta: args,
        });
      }
    }
    if (choice.finish_reason) this.finish = choice.finish_reason;
    return frames;
  }

  /**
   * A piece of a reasoning block: a block opens a `reasoning` item (its text
   * streamed as summary text deltas), which closes when another block, the
   * text or a tool call starts.
   */
  private thought(piece: ThinkingDelta): string {
    let frames = '';
    if (this.reasoning?.block !== piece.index) {
      frames += this.closeReasoning() + this.closeMessage() + this.closeCalls();
      const item: ReasoningItem = { type: 'reasoning', id: newReasoningId(), summary: [] };
      const sent: ThinkingBlock =
        piece.type === 'redacted_thinking'
          ? { type: 'redacted_thinking', data: '' }
          : { type: 'thinking', thinking: '', signature: '' };
      this.reasoning = { block: piece.index, index: this.output.length, item, sent, part: false };
      this.output.push(item);
      frames += this.event('response.output_item.added', {
        output_index: this.reasoning.index,
        item: { ...item, summary: [] },
      });
    }
    const r = this.reasoning as NonNullable<typeof this.reasoning>;
    if (r.sent.type === 'redacted_thinking') {
      if (piece.data) r.sent.data += piece.data;
      return frames;
    }
    if (piece.signature) r.sent.signature += piece.signature;
    if (piece.thinking) {
      const ids = { item_id: r.item.id, output_index: r.index, summary_index: 0 };
      if (!r.part) {
        r.part = true;
        frames += this.event('response.reasoning_summary_part.added', {
          ...ids,
          part: { type: 'summary_text', text: '' },
        });
      }
      r.sent.thinking += piece.thinking;
      frames += this.event('response.reasoning_summary_text.delta', { ...ids, delta: piece.thinking });
    }
    return frames;
  }

  private closeReasoning(): string {
    const r = this.reasoning;
    if (!r) return '';
    this.reasoning = undefined;
    this.thinking.push(r.sent);
    let frames = '';
    if (r.part && r.sent.type === 'thinking') {
      const text = r.sent.thinking;
      const ids = { item_id: r.item.id, output_index: r.index, summary_index: 0 };
      r.item.summary.push({ type: 'summary_text', text });
      frames += this.event('response.reasoning_summary_text.done', { ...ids, text });
      frames += this.event('response.reasoning_summary_part.done', { ...ids, part: { type: 'summary_text', text } });
    }
    const encrypted = encryptedContentOf(r.sent);
    if (encrypted !== undefined) r.item.encrypted_content = encrypted;
    return frames + this.event('response.output_item.done', { output_index: r.index, item: r.item });
  }

  /** `literal`: the delta as a JSON string literal, when the caller has it. */
  private text(kind: 'output_text' | 'refusal', delta: string, literal = JSON.stringify(delta)): string {
    let frames = '';
    if (!this.message) {
      frames += this.closeReasoning() + this.closeCalls();
      const item: MessageItem = {
        type: 'message',
        id: newItemId('msg'),
        status: 'in_progress',
        role: 'assistant',
        content: [],
      };
      this.message = { index: this.output.length, item, part: undefined, text: '' };
      this.output.push(item);
      frames += this.event('response.output_item.added', {
        output_index: this.message.index,
        item: { ...item, content: [] },
      });
    }
    const m = this.message;
    if (m.part !== kind) {
      frames += this.closePart();
      m.part = kind;
      m.text = '';
      const part =
        kind === 'output_text'
          ? { type: 'output_text', text: '', annotations: [], logprobs: [] }
          : { type: 'refusal', refusal: '' };
      frames += this.event('response.content_part.added', {
        item_id: m.item.id,
        output_index: m.index,
        content_index: m.item.content.length,
        part,
      });
    }
    m.text += delta;
    const contentIndex = m.item.content.length;
    if (kind === 'output_text') {
      // The most frequent event, written as text (the item id is ours: letters, digits and `_`).
      const data = `{"type":"response.output_text.delta","item_id":"${m.item.id}","output_index":${m.index},"content_index":${contentIndex},"delta":${literal},"logprobs":[],"sequence_number":${this.seq++}}`;
      return `${frames}event: response.output_text.delta\ndata: ${data}\n\n`;
    }
    return (
      frames +
      this.event('response.refusal.delta', {
        item_id: m.item.id,
        output_index: m.index,
        content_index: contentIndex,
        delta,
      })
    );
  }

  /** Ends the open content part of the message: its `.done` events, and the part joins the item. */
  private closePart(): string {
    const m = this.message;
    if (!m || m.part === undefined) return '';
    const contentIndex = m.item.content.length;
    const ids = { item_id: m.item.id, output_index: m.index, content_index: contentIndex };
    let frames: string;
    if (m.part === 'output_text') {
      const part = { type: 'output_text' as const, text: m.text, annotations: [], logprobs: [] };
      m.item.content.push(part);
      frames =
        this.event('response.output_text.done', { ...ids, text: m.text, logprobs: [] }) +
        this.event('response.content_part.done', { ...ids, part });
    } else {
      const part = { type: 'refusal' as const, refusal: m.text };
      m.item.content.push(part);
      frames =
        this.event('response.refusal.done', { ...ids, refusal: m.text }) +
        this.event('response.content_part.done', { ...ids, part });
    }
    m.part = undefined;
    return frames;
  }

  private itemStatus(): 'completed' | 'incomplete' {
    return statusOf(this.finish).status === 'completed' ? 'completed' : 'incomplete';
  }

  private closeMessage(): string {
    const m = this.message;
    if (!m) return '';
    const frames = this.closePart();
    this.message = undefined;
    m.item.status = this.itemStatus();
    return frames + this.event('response.output_item.done', { output_index: m.index, item: m.item });
  }

  private closeCalls(): string {
    let frames = '';
    for (const call of this.calls.values()) {
      if (call.done) continue;
      call.done = true;
      call.item.status = this.itemStatus();
      frames += this.event('response.function_call_arguments.done', {
        item_id: call.item.id,
        output_index: call.index,
        name: call.item.name,
        arguments: call.item.arguments,
      });
      frames += this.event('response.output_item.done', { output_index: call.index, item: call.item });
    }
    return frames;
  }

  /** The frames of a clean end: open items closed, then `response.completed` or `response.incomplete`. */
  end(): string {
    let frames = this.opening();
    frames += this.closeReasoning() + this.closeMessage() + this.closeCalls();
    const { status, incomplete_details } = statusOf(this.finish);
    const response = responseObject(this.facts, { status, incomplete_details, output: this.output, usage: this.usage });
    this.finalResponse = response;
    return frames + this.event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  /** A failure after the first event: one `error` event, never a clean end. */
  fail(err: GatewayError): string {
    return this.opening() + this.event('error', { code: err.code, message: err.message, param: null });
  }
}
