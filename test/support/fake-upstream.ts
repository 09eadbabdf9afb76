import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WireFormat } from '../../src/providers/types.ts';
import { anthropicDialect } from './fake-upstream/anthropic-dialect.ts';
import { embeddingsReply, geminiEmbeddingsReply } from './fake-embeddings.ts';
import { readBody } from './read-body.ts';
import {
  applyLimits,
  countWords,
  fakeAnswer,
  type FakeDialect,
  type FakePrompt,
  type FakeReply,
} from './fake-upstream/dialect.ts';
import { geminiDialect } from './fake-upstream/gemini-dialect.ts';
import { openAiDialect } from './fake-upstream/openai-dialect.ts';
import { FakeResponsesApi } from './fake-upstream/responses-api.ts';
import { MALFORMED_DATA, serializeSseFrame } from './fake-upstream/sse.ts';
import { tokenCountReply } from './fake-upstream/token-count.ts';

/**
 * A fake LLM upstream for tests and benchmarks: a real `node:http` server
 * speaking one wire format at the paths the adapters call, streamed and not.
 * Replies are deterministic (`"Echo: " + last user text`); faults are switched
 * on at runtime with {@link FakeUpstream.setBehavior}.
 */

/** SSE event name of a mid-stream error, in formats that name their events; its data is the format's error body. */
const ERROR_EVENT_NAMES: Partial<Record<WireFormat, string>> = { anthropic: 'error' };

/** The request's headers as one line of `name=value` pairs, for `echoHeaders`. */
function echoOf(headers: IncomingHttpHeaders): string {
  return Object.entries(headers)
    .map(([name, value]) => `${name}=${Array.isArray(value) ? value.join(',') : (value ?? '')}`)
    .join(' ');
}

const DIALECTS: Record<WireFormat, FakeDialect> = {
  openai: openAiDialect,
  gemini: geminiDialect,
  anthropic: anthropicDialect,
};

/** Path prefix of each format's API, part of {@link FakeUpstream.url} as the gateway's base_url. */
const BASE_PATHS: Record<WireFormat, string> = {
  openai: '/v1',
  gemini: '/v1beta',
  // The adapter appends `/v1/messages` itself.
  anthropic: '',
};

/** Make the next `count` requests fail. */
export interface FailNext {
  count: number;
  status: number;
  /** Seconds, sent as `Retry-After`. */
  retryAfter?: number;
  /** Raw body to send; default: the format's error body. */
  body?: unknown;
  /** Message inside the default error body. */
  message?: string;
}

/**
 * Faults and timing. Each field applies to every following request until
 * changed, except `failNext`, which counts down.
 */
export interface FakeUpstreamBehavior {
  /** Delay before the response headers. */
  latencyMs?: number;
  /** Extra delay before the headers, drawn uniformly from [0, latencyJitterMs): keeps closed-loop clients out of lockstep. */
  latencyJitterMs?: number;
  /** Delay between stream events. */
  chunkDelayMs?: number;
  failNext?: FailNext;
  /** Read the request, never answer. */
  hang?: boolean;
  /** Destroy the socket once the request is read. */
  resetConnection?: boolean;
  /** Write this many stream events (counted from 0), then destroy the socket. */
  cutStreamAfterChunks?: number;
  /** Replace the data of stream event k (counted from 0) with invalid JSON. */
  malformedChunkAt?: number;
  /** Replace stream event k (counted from 0) with the format's mid-stream error event (message from `failNext`'s defaults: 500). */
  errorEventAt?: number;
  /**
   * Quote the request's headers (`name=value ...`, auth headers included) in
   * the upstream's own texts: the malformed event of `malformedChunkAt`, the
   * message of `failNext`'s error body (unless it sets `body`) and of
   * `errorEventAt`'s event. As an upstream or proxy that echoes the request
   * in its diagnostics: the key the gateway sent comes back in the reply.
   */
  echoHeaders?: boolean;
  /** Reply text instead of the echo (still prefixed `[i] ` per choice when n > 1). */
  replyText?: string;
  /** Stop a text reply at the request's first stop sequence or after its output token limit (a word a token), as a model does. */
  honorLimits?: boolean;
  /** Reason before every answer, as a reasoning model (OpenAI format: `reasoning_content`, as OpenAI-compatible reasoning servers send it). */
  reasoning?: boolean;
  /**
   * Search the web before every answer, as a model with Anthropic's web search
   * tool (Anthropic format only): a `server_tool_use` and a
   * `web_search_tool_result` block before the text, which cites the result.
   */
  webSearch?: boolean;
}

export interface FakeUpstreamOptions {
  format: WireFormat;
  /** The key the auth header must carry. */
  apiKey?: string;
  /** @defaultValue 0: any free port */
  port?: number;
  host?: string;
  /** Record requests in {@link FakeUpstream.requests}; turn off for long benchmarks. @defaultValue true */
  record?: boolean;
  /** Initial behaviour, also what {@link FakeUpstream.reset} returns to. */
  behavior?: FakeUpstreamBehavior;
  /** Serve https with this key and certificate (PEM); {@link FakeUpstream.url} is then https. */
  tls?: { key: string; cert: string };
}

export interface RecordedRequest {
  method: string;
  /** Path and query, as received. */
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
  /** Date.now() when the request had been read. */
  receivedAt: number;
}

export interface FakeUpstream {
  readonly format: WireFormat;
  /** The base URL to configure as the provider's `base_url`. */
  readonly url: string;
  readonly port: number;
  readonly apiKey: string;
  readonly requests: RecordedRequest[];
  /** Current behaviour. */
  readonly behavior: Readonly<FakeUpstreamBehavior>;
  /** Responses whose connection closed before they were complete (since the last reset). */
  readonly closedEarly: number;
  /** Merges into the current behaviour; pass a field as undefined to clear it. */
  setBehavior(patch: FakeUpstreamBehavior): void;
  /** Clears the recorded requests and restores the initial behaviour. */
  reset(): void;
  close(): Promise<void>;
}

export const DEFAULT_FAKE_API_KEY = 'fake-upstream-key';

const DEFAULT_STATUS_MESSAGES: Record<number, string> = {
  401: 'Invalid API key.',
  404: 'Not found.',
  429: 'Rate limit reached. Please retry later.',
  500: 'The server had an error while processing your request.',
  503: 'The service is temporarily unavailable.',
  529: 'Overloaded.',
};

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

function buildReply(
  prompt: FakePrompt,
  replyText: string | undefined,
  honorLimits = false,
  reasoning = false,
): FakeReply {
  const answer = fakeAnswer(prompt, replyText);
  const { toolCalls } = answer;
  // A text reply longer than the budget stops at it, as a model would; it stops at a stop sequence with honorLimits.
  const limited = toolCalls.length === 0 ? applyLimits(answer.text, prompt, honorLimits) : { text: answer.text };
  const text = limited.text;
  const n = prompt.n;
  const texts =
    n > 1 && text !== ''
      ? Array.from({ length: n }, (_, i) => `[${i}] ${text}`)
      : Array.from({ length: n }, () => text);
  const callWords = toolCalls.reduce((sum, call) => sum + countWords(call.arguments), 0);
  const reply: FakeReply = {
    model: prompt.model,
    texts,
    toolCalls,
    promptTokens: prompt.inputWords,
    completionTokens: texts.map((t) => countWords(t) + callWords),
  };
  if (limited.finish !== undefined) reply.finish = limited.finish;
  if (limited.stopSequence !== undefined) reply.stopSequence = limited.stopSequence;
  if (prompt.thinking || reasoning) {
    const thought = `Thinking about: ${prompt.lastUserText}`;
    reply.thinking = { text: thought, signature: `sig_${Buffer.from(thought).toString('base64')}` };
  }
  return reply;
}

export async function startFakeUpstream(options: FakeUpstreamOptions): Promise<FakeUpstream> {
  const dialect = DIALECTS[options.format];
  const apiKey = options.apiKey ?? DEFAULT_FAKE_API_KEY;
  const record = options.record ?? true;
  const initialBehavior: FakeUpstreamBehavior = { ...options.behavior };
  let behavior: FakeUpstreamBehavior = { ...initialBehavior };
  const requests: RecordedRequest[] = [];
  const responsesApi = new FakeResponsesApi();

  /** Takes one failure off `failNext`, if any is left. */
  function consumeFailure(): FailNext | undefined {
    const fail = behavior.failNext;
    if (fail === undefined || fail.count <= 0) return undefined;
    const remaining = fail.count - 1;
    behavior = { ...behavior, failNext: remaining > 0 ? { ...fail, count: remaining } : undefined };
    return fail;
  }

  function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
    sendJson(res, status, dialect.errorBody(status, message), headers);
  }

  async function writeStream(res: ServerResponse, frames: string[], current: FakeUpstreamBehavior): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const delay = current.chunkDelayMs ?? 0;
    const cutAfter = current.cutStreamAfterChunks;
    if (delay === 0 && cutAfter === undefined) {
      // The benchmark path: one write, no timers.
      res.end(frames.join(''));
      return;
    }
    for (const [i, frame] of frames.entries()) {
      if (cutAfter !== undefined && i >= cutAfter) {
        res.socket?.destroy();
        return;
      }
      if (i > 0 && delay > 0) {
        await sleep(delay);
        if (res.destroyed) return;
      }
      // Wait for the write to reach the socket, so a cut right after keeps it.
      await new Promise<void>((resolve) => res.write(frame, () => resolve()));
      if (res.destroyed) return;
    }
    if (cutAfter !== undefined) {
      // Fewer events than the cut: all were sent, but the stream still never ends cleanly.
      res.socket?.destroy();
      return;
    }
    res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const body = parseJson(rawBody);
    if (record)
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        receivedAt: Date.now(),
      });
    // A snapshot, so a behaviour changed mid-request applies from the next request.
    const current = behavior;
    if (current.resetConnection) {
      req.socket.destroy();
      return;
    }
    if (current.hang) return;
    const delayMs = (current.latencyMs ?? 0) + (current.latencyJitterMs ? Math.random() * current.latencyJitterMs : 0);
    if (delayMs > 0) {
      await sleep(delayMs);
      if (res.destroyed) return;
    }
    const failure = consumeFailure();
    if (failure !== undefined) {
      const headers: Record<string, string> =
        failure.retryAfter !== undefined ? { 'retry-after': String(failure.retryAfter) } : {};
      if (failure.body !== undefined) {
        sendJson(res, failure.status, failure.body, headers);
      } else {
        const message =
          failure.message ?? DEFAULT_STATUS_MESSAGES[failure.status] ?? `Fake upstream failure (${failure.status}).`;
        sendError(
          res,
          failure.status,
          current.echoHeaders ? `${message} Request headers: ${echoOf(req.headers)}` : message,
          headers,
        );
      }
      return;
    }

    // --- embeddings (test/support/fake-embeddings.ts): OpenAI's POST /v1/embeddings, for the semantic cache ---
    if (
      options.format === 'openai' &&
      req.method === 'POST' &&
      new URL(req.url ?? '/', 'http://fake').pathname === '/v1/embeddings'
    ) {
      if (!dialect.isAuthorized(req.headers, apiKey)) return sendError(res, 401, DEFAULT_STATUS_MESSAGES[401] ?? '');
      const embeddings = embeddingsReply(body);
      return typeof embeddings === 'string' ? sendError(res, 400, embeddings) : sendJson(res, 200, embeddings);
    }
    const geminiEmbed =
      options.format === 'gemini' && req.method === 'POST'
        ? /^\/v1beta\/models\/([^/:]+):(embedContent|batchEmbedContents)$/.exec(
            new URL(req.url ?? '/', 'http://fake').pathname,
          )
        : null;
    if (geminiEmbed) {
      if (!dialect.isAuthorized(req.headers, apiKey)) return sendError(res, 401, DEFAULT_STATUS_MESSAGES[401] ?? '');
      const embeddings = geminiEmbeddingsReply(
        decodeURIComponent(geminiEmbed[1]!),
        geminiEmbed[2] as 'embedContent' | 'batchEmbedContents',
        body,
      );
      return typeof embeddings === 'string' ? sendError(res, 400, embeddings) : sendJson(res, 200, embeddings);
    }
    // --- /embeddings ---
    // --- OpenAI's Responses API (fake-upstream/responses-api.ts), for the gateway's native Responses mode ---
    if (
      options.format === 'openai' &&
      req.method === 'POST' &&
      new URL(req.url ?? '/', 'http://fake').pathname === '/v1/responses'
    ) {
      if (!dialect.isAuthorized(req.headers, apiKey)) return sendError(res, 401, DEFAULT_STATUS_MESSAGES[401] ?? '');
      const outcome = responsesApi.create(body, current.replyText);
      if ('error' in outcome) return sendJson(res, outcome.status, outcome.error);
      if ((body as { stream?: unknown }).stream !== true) return sendJson(res, 200, outcome.response);
      const frames = responsesApi.events(outcome.response).map((frame, i) =>
        i === current.errorEventAt
          ? serializeSseFrame({
              event: 'error',
              data: JSON.stringify({
                type: 'error',
                code: 'server_error',
                message: 'The server had an error.',
                param: null,
                sequence_number: i,
              }),
            })
          : serializeSseFrame(frame),
      );
      return writeStream(res, frames, current);
    }
    const resource =
      options.format === 'openai'
        ? responsesApi.resource(req.method ?? '', new URL(req.url ?? '/', 'http://fake'))
        : undefined;
    if (resource) {
      if (!dialect.isAuthorized(req.headers, apiKey)) return sendError(res, 401, DEFAULT_STATUS_MESSAGES[401] ?? '');
      return 'error' in resource
        ? sendJson(res, resource.status, resource.error)
        : sendJson(res, 200, resource.response);
    }
    // --- /responses ---
    const counted = tokenCountReply(
      options.format,
      req.method ?? '',
      new URL(req.url ?? '/', 'http://fake'),
      req.headers,
      apiKey,
      body,
    );
    if (counted) return sendJson(res, counted.status, counted.body);
    const route = dialect.route(req.method ?? '', new URL(req.url ?? '/', 'http://fake'));
    if (route === undefined) return sendError(res, 404, `No route for ${req.method} ${req.url}.`);
    if (!dialect.isAuthorized(req.headers, apiKey)) return sendError(res, 401, DEFAULT_STATUS_MESSAGES[401] ?? '');
    const headerProblem = dialect.headerProblem?.(req.headers);
    if (headerProblem !== undefined) return sendError(res, 400, headerProblem);
    if (typeof body !== 'object' || body === null) return sendError(res, 400, 'The body is not JSON.');
    const prompt = dialect.readPrompt(body, route);
    if (typeof prompt === 'string') return sendError(res, 400, prompt);

    const reply = buildReply(prompt, current.replyText, current.honorLimits === true, current.reasoning === true);
    if (current.webSearch === true) reply.webSearch = true;
    if (!prompt.stream) return sendJson(res, 200, dialect.completionBody(reply));
    const echo = current.echoHeaders ? ` request headers: ${echoOf(req.headers)}` : '';
    const frames = dialect.streamFrames(reply, prompt).map((frame, i) => {
      if (i === current.malformedChunkAt) return serializeSseFrame({ ...frame, data: MALFORMED_DATA + echo });
      if (i === current.errorEventAt) {
        const data = JSON.stringify(dialect.errorBody(500, `${DEFAULT_STATUS_MESSAGES[500]}${echo}`));
        const event = ERROR_EVENT_NAMES[options.format];
        return serializeSseFrame(event === undefined ? { data } : { event, data });
      }
      return serializeSseFrame(frame);
    });
    await writeStream(res, frames, current);
  }

  let closedEarly = 0;
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    // A client that hangs up before the reply ended (e.g. the gateway aborting a cancelled call).
    res.once('close', () => {
      if (!res.writableFinished) closedEarly++;
    });
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else sendError(res, 500, `Fake upstream crashed: ${String(error)}`);
    });
  };
  const server = options.tls ? createHttpsServer(options.tls, listener) : createServer(listener);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    format: options.format,
    url: `${options.tls ? 'https' : 'http'}://${host}:${port}${BASE_PATHS[options.format]}`,
    port,
    apiKey,
    requests,
    get behavior() {
      return behavior;
    },
    get closedEarly() {
      return closedEarly;
    },
    setBehavior(patch) {
      behavior = { ...behavior, ...patch };
    },
    reset() {
      requests.length = 0;
      closedEarly = 0;
      behavior = { ...initialBehavior };
    },
    close() {
      // Hung and keep-alive connections would otherwise hold close() open.
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

export type ProviderLetter = 'a' | 'b' | 'c';

/**
 * One fake upstream per wire format, as the default providers speak them
 * (provider_a OpenAI, provider_b Gemini, provider_c Anthropic), each with the
 * key `upstream-<letter>-secret`, and the environment that hands those keys
 * to the gateway (`PROVIDER_A_API_KEY`...).
 */
export async function startUpstreamTrio(): Promise<{
  upstreams: Record<ProviderLetter, FakeUpstream>;
  env: Record<string, string>;
}> {
  const [a, b, c] = await Promise.all([
    startFakeUpstream({ format: 'openai', apiKey: 'upstream-a-secret' }),
    startFakeUpstream({ format: 'gemini', apiKey: 'upstream-b-secret' }),
    startFakeUpstream({ format: 'anthropic', apiKey: 'upstream-c-secret' }),
  ]);
  const env = { PROVIDER_A_API_KEY: a.apiKey, PROVIDER_B_API_KEY: b.apiKey, PROVIDER_C_API_KEY: c.apiKey };
  return { upstreams: { a, b, c }, env };
}
