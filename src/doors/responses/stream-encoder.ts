import { chunkOf, stringOf, textLiteralOf } from '../../chat/chunk-text.ts';
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
  ResponseJson,
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
    | {
        index: number;
        item: MessageItem;
        part: 'output_text' | 'refusal' | undefined;
        text: string;
        /** The JSON text of each part done. */
        parts: string[];
      }
    | undefined;
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
  /** The response object's JSON text, made at the opening. */
  private responseJson: ResponseJson | undefined;
  /** The JSON text of each output item as its `output_item.done` event sent it, for the closing response. */
  private readonly outputJson: Array<string | undefined> = [];

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

  /**
   * An event written as text: `fields` is its data's members between `type`
   * and `sequence_number`, each value serialized once (the frames of a reply
   * cost more than the chat door's whole work when built as objects).
   */
  private event(type: string, fields: string): string {
    return `event: ${type}\ndata: {"type":"${type}",${fields},"sequence_number":${this.seq++}}\n\n`;
  }

  /** An output item's `output_item.done` event; the item's JSON text is kept for the closing response. */
  private itemDone(index: number, item: OutputItem, json = JSON.stringify(item)): string {
    this.outputJson[index] = json;
    return this.event('response.output_item.done', `"output_index":${index},"item":${json}`);
  }

  private opening(): string {
    if (this.started) return '';
    this.started = true;
    // The response object is serialized once for both events, and is the closing one's text too.
    this.responseJson = new ResponseJson(this.facts);
    const response = this.responseJson.opening;
    return (
      this.event('response.created', `"response":${response}`) +
      this.event('response.in_progress', `"response":${response}`)
    );
  }

  chunk(json: string): string {
    // Most chunks of a reply carry only text: only their text is read, once the response opened.
    if (this.started) {
      const literal = textLiteralOf(json);
      if (literal !== undefined) return literal === '""' ? '' : this.text('output_text', stringOf(literal), literal);
    }
    const chunk = chunkOf(json) as ChatCompletionChunk & { usage?: ChatUsageJson | null };
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
        frames += this.event(
          'response.output_item.added',
          `"output_index":${call.index},"item":${JSON.stringify(item)}`,
        );
      }
      const args = piece.function?.arguments;
      if (args) {
        call.item.arguments += args;
        // A call already done that gets more arguments: the closing response serializes it anew.
        if (call.done) this.outputJson[call.index] = undefined;
        frames += this.event(
          'response.function_call_arguments.delta',
          `"item_id":${JSON.stringify(call.item.id)},"output_index":${call.index},"delta":${JSON.stringify(args)}`,
        );
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
      frames += this.event(
        'response.output_item.added',
        `"output_index":${this.reasoning.index},"item":${JSON.stringify(item)}`,
      );
    }
    const r = this.reasoning as NonNullable<typeof this.reasoning>;
    if (r.sent.type === 'redacted_thinking') {
      if (piece.data) r.sent.data += piece.data;
      return frames;
    }
    if (piece.signature) r.sent.signature += piece.signature;
    if (piece.thinking) {
      const ids = reasoningIds(r);
      if (!r.part) {
        r.part = true;
        frames += this.event(
          'response.reasoning_summary_part.added',
          `${ids},"part":{"type":"summary_text","text":""}`,
        );
      }
      r.sent.thinking += piece.thinking;
      frames += this.event('response.reasoning_summary_text.delta', `${ids},"delta":${JSON.stringify(piece.thinking)}`);
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
      const ids = reasoningIds(r);
      const textJson = JSON.stringify(text);
      r.item.summary.push({ type: 'summary_text', text });
      frames += this.event('response.reasoning_summary_text.done', `${ids},"text":${textJson}`);
      frames += this.event(
        'response.reasoning_summary_part.done',
        `${ids},"part":{"type":"summary_text","text":${textJson}}`,
      );
    }
    const encrypted = encryptedContentOf(r.sent);
    if (encrypted !== undefined) r.item.encrypted_content = encrypted;
    return frames + this.itemDone(r.index, r.item);
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
      this.message = { index: this.output.length, item, part: undefined, text: '', parts: [] };
      this.output.push(item);
      frames += this.event(
        'response.output_item.added',
        `"output_index":${this.message.index},"item":${JSON.stringify(item)}`,
      );
    }
    const m = this.message;
    if (m.part !== kind) {
      frames += this.closePart();
      m.part = kind;
      m.text = '';
      frames += this.event(
        'response.content_part.added',
        `${partIds(m)},"part":${kind === 'output_text' ? EMPTY_OUTPUT_TEXT : EMPTY_REFUSAL}`,
      );
    }
    m.text += delta;
    const contentIndex = m.item.content.length;
    if (kind === 'output_text') {
      // The most frequent event, written as text (the item id is ours: letters, digits and `_`).
      const data = `{"type":"response.output_text.delta","item_id":"${m.item.id}","output_index":${m.index},"content_index":${contentIndex},"delta":${literal},"logprobs":[],"sequence_number":${this.seq++}}`;
      return `${frames}event: response.output_text.delta\ndata: ${data}\n\n`;
    }
    return frames + this.event('response.refusal.delta', `${partIds(m)},"delta":${literal}`);
  }

  /** Ends the open content part of the message: its `.done` events, and the part joins the item. */
  private closePart(): string {
    const m = this.message;
    if (!m || m.part === undefined) return '';
    const ids = partIds(m);
    // The part's text is serialized once: for its two events, and the item's.
    const text = JSON.stringify(m.text);
    let frames: string;
    let part: string;
    if (m.part === 'output_text') {
      m.item.content.push({ type: 'output_text', text: m.text, annotations: [], logprobs: [] });
      part = `{"type":"output_text","text":${text},"annotations":[],"logprobs":[]}`;
      frames = this.event('response.output_text.done', `${ids},"text":${text},"logprobs":[]`);
    } else {
      m.item.content.push({ type: 'refusal', refusal: m.text });
      part = `{"type":"refusal","refusal":${text}}`;
      frames = this.event('response.refusal.done', `${ids},"refusal":${text}`);
    }
    m.parts.push(part);
    m.part = undefined;
    return frames + this.event('response.content_part.done', `${ids},"part":${part}`);
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
    const { id, status } = m.item;
    const item = `{"type":"message","id":${JSON.stringify(id)},"status":"${status}","role":"assistant","content":[${m.parts.join(',')}]}`;
    return frames + this.itemDone(m.index, m.item, item);
  }

  private closeCalls(): string {
    let frames = '';
    for (const call of this.calls.values()) {
      if (call.done) continue;
      call.done = true;
      call.item.status = this.itemStatus();
      const { id, name, arguments: args } = call.item;
      frames += this.event(
        'response.function_call_arguments.done',
        `"item_id":${JSON.stringify(id)},"output_index":${call.index},"name":${JSON.stringify(name)},"arguments":${JSON.stringify(args)}`,
      );
      frames += this.itemDone(call.index, call.item);
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
    const output = `[${this.output.map((item, i) => this.outputJson[i] ?? JSON.stringify(item)).join(',')}]`;
    const json = (this.responseJson as ResponseJson).closing(response, output);
    return (
      frames + this.event(status === 'completed' ? 'response.completed' : 'response.incomplete', `"response":${json}`)
    );
  }

  /** A failure after the first event: one `error` event, never a clean end. */
  fail(err: GatewayError): string {
    return (
      this.opening() +
      this.event('error', `"code":${JSON.stringify(err.code)},"message":${JSON.stringify(err.message)},"param":null`)
    );
  }
}

const EMPTY_OUTPUT_TEXT = '{"type":"output_text","text":"","annotations":[],"logprobs":[]}';
const EMPTY_REFUSAL = '{"type":"refusal","refusal":""}';

/** The members naming the open content part of a message item. */
function partIds(m: { index: number; item: MessageItem }): string {
  return `"item_id":${JSON.stringify(m.item.id)},"output_index":${m.index},"content_index":${m.item.content.length}`;
}

/** The members naming a reasoning item's summary part. */
function reasoningIds(r: { index: number; item: ReasoningItem }): string {
  return `"item_id":${JSON.stringify(r.item.id)},"output_index":${r.index},"summary_index":0`;
}
