import type { ChatCompletion, ChatCompletionChunk } from '../chat/types.ts';
import { PiiDetectedError } from '../errors/catalog.ts';
import type { DlpEngine } from './engine.ts';
import type { DlpAction } from './entities.ts';
import type { Finding } from './recognizer.ts';
import { PlaceholderRegistry, redactText, restorePlaceholders } from './redaction.ts';

/** What a {@link ReplyFilter} does; built by the guard for one exchange. */
export interface ReplyFilterOptions {
  /**
   * Scan the reply (DLP_SCAN_REPLIES); undefined to only restore. `detect`,
   * when given, replaces the engine on the async entry points (the engine
   * and the analyzer merged, with the failure policy applied).
   */
  scan?: {
    engine: DlpEngine;
    threshold: number;
    action: DlpAction;
    report: (counts: Record<string, number>) => void;
    detect?: (text: string) => Promise<Finding[]>;
  };
  /** Placeholder -> the client's value (DLP_RESTORE); undefined to not restore. */
  originals?: ReadonlyMap<string, string>;
  /** The request's registry, so a value first seen in the reply gets the next number of its type. */
  registry: PlaceholderRegistry;
}

/** What the reply path of an exchange runs each reply entry through (a `chat.completion`, or what its door's job answers). */
export interface ReplyScreen {
  /** A whole reply (JSON text), filtered. */
  completionAsync(json: string): Promise<string>;
  /** One streamed entry (JSON text) filtered: the entries to send in its place, one JSON text a line; empty for none. */
  chunkAsync(json: string): Promise<string>;
  /** Entries releasing what is still held at the end of a stream. */
  flushAsync(): Promise<string[]>;
}

/**
 * Characters of a streamed reply held back before they are scanned and
 * sent: the longest value a recognizer reads whole (an e-mail address is at
 * most 64 + 1 + 255) plus the two words of context after it. A value that
 * starts before the cut therefore ends inside the text scanned with it, and
 * is then held from its start: at most this, one value and
 * {@link REPLY_SCAN_STEP} are ever held.
 */
export const REPLY_HOLD_BACK = 384;
/**
 * Scanning waits for this many characters beyond the hold-back, so a reply
 * streamed a few characters a chunk is scanned every few dozen characters,
 * not at every chunk.
 */
export const REPLY_SCAN_STEP = 96;
/** Already-sent text kept as the context words before the next piece. */
const LEFT_CONTEXT = 64;
/** A placeholder cut in two (`<EMAIL_ADD`) is held until its `>` arrives. */
const OPEN_PLACEHOLDER = /<[A-Z_\d]{0,40}$/;

interface HeldText {
  pending: string;
  sent: string;
}

/**
 * The reply side of DLP for one exchange: scans the provider's text with the
 * request's action (redact with the request's numbering, block with
 * `pii_detected`, log) and puts the client's own placeholders back
 * (DLP_RESTORE), so the client reads its e-mail address although the
 * provider only ever saw `<EMAIL_ADDRESS_1>`.
 *
 * Whole completions are filtered at once; streamed ones per choice and tool
 * call, holding back {@link REPLY_HOLD_BACK} characters (less when only
 * restoring: just an unfinished placeholder) and releasing them with the
 * choice's finish chunk. Restored values in tool-call arguments are JSON-escaped.
 */
export class ReplyFilter implements ReplyScreen {
  /** Held text per choice (`"0"`) and per choice's tool call (`"0.1"`). */
  private readonly held = new Map<string, HeldText>();
  private template: ChatCompletionChunk | undefined;
  private readonly options: ReplyFilterOptions;

  constructor(options: ReplyFilterOptions) {
    this.options = options;
  }

  /** A whole `chat.completion` (JSON text) filtered: contents, refusals and tool-call arguments. */
  completion(json: string): string {
    return this.runSync(this.completionSteps(json));
  }

  /** {@link completion} with the analyzer's findings too, when the guard has one. */
  completionAsync(json: string): Promise<string> {
    return this.runAsync(this.completionSteps(json));
  }

  /** {@link chunk} with the analyzer's findings too, when the guard has one. */
  chunkAsync(json: string): Promise<string> {
    return this.runAsync(this.chunkSteps(json));
  }

  /** {@link flush} with the analyzer's findings too, when the guard has one. */
  flushAsync(): Promise<string[]> {
    return this.runAsync(this.flushSteps());
  }

  /**
   * One piece of a streamed text under `key` (any name the caller keeps apart),
   * held back and filtered as {@link chunk} holds a choice's content; `last`
   * releases all that `key` holds. `json` marks text inside a JSON string
   * (function call arguments): restored values are escaped.
   */
  pieceAsync(key: string, piece: string, last: boolean, json = false): Promise<string> {
    return this.runAsync(this.release(key, piece, last, json ? jsonEscape : identity));
  }

  /** One whole text filtered, as {@link completion} filters a message's content. */
  textAsync(text: string, json = false): Promise<string> {
    return this.runAsync(this.filter('', text, json ? jsonEscape : identity));
  }

  /*
   * The filtering is written once, as generators that yield each text to
   * scan and take its findings back; runSync answers with the engine, runAsync
   * with the engine and the analyzer.
   */
  private runSync<T>(steps: Generator<string, T, Finding[]>): T {
    const scan = this.options.scan;
    let step = steps.next();
    while (!step.done) step = steps.next(scan ? scan.engine.analyze(step.value, { threshold: scan.threshold }) : []);
    return step.value;
  }

  private async runAsync<T>(steps: Generator<string, T, Finding[]>): Promise<T> {
    const scan = this.options.scan;
    if (!scan?.detect) return this.runSync(steps);
    let step = steps.next();
    while (!step.done) step = steps.next(await scan.detect(step.value));
    return step.value;
  }

  private *completionSteps(json: string): Generator<string, string, Finding[]> {
    const completion = JSON.parse(json) as ChatCompletion;
    for (const choice of completion.choices) {
      const message = choice.message;
      if (typeof message.content === 'string') message.content = yield* this.filter('', message.content);
      if (typeof message.refusal === 'string') message.refusal = yield* this.filter('', message.refusal);
      for (const call of message.tool_calls ?? [])
        call.function.arguments = yield* this.filter('', call.function.arguments, jsonEscape);
    }
    return JSON.stringify(completion);
  }

  /**
   * One streamed chunk (JSON text) filtered; text may move to a later chunk.
   * Contents and tool-call arguments are held separately; a choice's finish
   * chunk releases all of that choice's held text.
   */
  chunk(json: string): string {
    return this.runSync(this.chunkSteps(json));
  }

  private *chunkSteps(json: string): Generator<string, string, Finding[]> {
    const chunk = JSON.parse(json) as ChatCompletionChunk;
    this.template ??= chunk;
    for (const choice of chunk.choices) {
      const finished = choice.finish_reason !== null;
      const delta = choice.delta;
      const content = yield* this.release(`${choice.index}`, delta.content ?? '', finished, identity);
      if (content !== '' || delta.content !== undefined) delta.content = content;
      for (const call of delta.tool_calls ?? []) {
        if (call.function?.arguments !== undefined)
          call.function.arguments = yield* this.release(
            `${choice.index}.${call.index}`,
            call.function.arguments,
            false,
            jsonEscape,
          );
      }
      if (!finished) continue;
      // Arguments still held go out with the finish chunk, as one more piece of each call.
      for (const [key, state] of this.held) {
        const [owner, call] = key.split('.');
        if (call === undefined || owner !== `${choice.index}` || state.pending === '') continue;
        const args = yield* this.release(key, '', true, jsonEscape);
        (delta.tool_calls ??= []).push({ index: Number(call), function: { arguments: args } });
      }
    }
    return JSON.stringify(chunk);
  }

  /** Chunks releasing what is still held (a stream that ended without finish reasons); usually none. */
  flush(): string[] {
    return this.runSync(this.flushSteps());
  }

  private *flushSteps(): Generator<string, string[], Finding[]> {
    const out: string[] = [];
    for (const [key, state] of this.held) {
      if (state.pending === '' || !this.template) continue;
      const [owner, call] = key.split('.');
      const text = yield* this.release(key, '', true, call === undefined ? identity : jsonEscape);
      const delta =
        call === undefined
          ? { content: text }
          : { tool_calls: [{ index: Number(call), function: { arguments: text } }] };
      const { id, object, created, model } = this.template;
      out.push(
        JSON.stringify({
          id,
          object,
          created,
          model,
          choices: [{ index: Number(owner), delta, finish_reason: null, logprobs: null }],
        }),
      );
    }
    return out;
  }

  /** Appends `piece` to what `key` holds and returns the filtered text that may go out now. */
  private *release(
    key: string,
    piece: string,
    all: boolean,
    escape: (value: string) => string,
  ): Generator<string, string, Finding[]> {
    let state = this.held.get(key);
    if (!state) {
      state = { pending: '', sent: '' };
      this.held.set(key, state);
    }
    const text = state.pending + piece;
    if (text === '') return '';
    if (!all && this.options.scan && text.length < REPLY_HOLD_BACK + REPLY_SCAN_STEP) {
      state.pending = text;
      return '';
    }
    const cut = all ? text.length : yield* this.safeCut(state.sent, text);
    const released = text.slice(0, cut);
    state.pending = text.slice(cut);
    const out = yield* this.filter(state.sent, released, escape);
    state.sent = (state.sent + released).slice(-LEFT_CONTEXT);
    return out;
  }

  private *safeCut(sent: string, text: string): Generator<string, number, Finding[]> {
    let cut = text.length;
    const scan = this.options.scan;
    if (scan) {
      cut = Math.max(0, text.length - REPLY_HOLD_BACK);
      // A value that reaches past the cut is held whole.
      for (const finding of yield sent + text) {
        if (finding.end - sent.length > cut) cut = Math.max(0, Math.min(cut, finding.start - sent.length));
      }
    }
    const open = OPEN_PLACEHOLDER.exec(text.slice(0, cut));
    return open ? open.index : cut;
  }

  /** Scans `text` (with `before` as context only), applies the action, then restores. */
  private *filter(
    before: string,
    text: string,
    escape: (value: string) => string = identity,
  ): Generator<string, string, Finding[]> {
    let out = text;
    const scan = this.options.scan;
    if (scan && text !== '') {
      const findings = (yield before + text)
        .filter((f) => f.start >= before.length)
        .map((f) => ({ ...f, start: f.start - before.length, end: f.end - before.length }));
      if (findings.length > 0) {
        const counts: Record<string, number> = {};
        for (const f of findings) counts[f.entity] = (counts[f.entity] ?? 0) + 1;
        scan.report(counts);
        if (scan.action === 'block') throw new PiiDetectedError(Object.keys(counts).sort(), 'reply');
        if (scan.action === 'redact') out = redactText(text, findings, this.options.registry);
      }
    }
    return this.options.originals ? restorePlaceholders(out, this.options.originals, escape) : out;
  }
}

const identity = (value: string): string => value;

function jsonEscape(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}
