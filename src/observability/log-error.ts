import { scrubUpstreamText } from '../execution/upstream-text.ts';

/**
 * How an error appears in a log line (`err`): its type, message, stack,
 * a short error code and its cause, nothing else. Other own properties never
 * pass: an ioredis error carries the failed command with its arguments (the
 * password of an AUTH), a fetch error its request. Message and stack go
 * through the upstream scrubber (credential shapes, URL credentials) and lose
 * every secret the process was given, since either may quote what a server said.
 */
export interface LoggedError {
  type: string;
  message: string;
  stack?: string;
  code?: string;
  cause?: LoggedError;
}

/** Longest message or stack kept, in characters. */
const MAX_TEXT = 4_000;
/** Causes followed; a cycle or a long chain stops here. */
const MAX_CAUSES = 3;

/** Builds the `err` serializer of a logger; `secrets` are removed from every message and stack. */
export function errorSerializer(secrets: readonly string[]): (err: unknown) => LoggedError {
  const scrub = (text: string) => scrubUpstreamText(text, secrets, { maxLength: MAX_TEXT });
  const serialize = (err: unknown, depth: number): LoggedError => {
    if (!(err instanceof Error)) return fromPlain(err, scrub);
    const out: LoggedError = { type: err.name || err.constructor?.name || 'Error', message: scrub(err.message) };
    // V8 repeats the message in the stack's first line: the stack is scrubbed as a whole too.
    if (err.stack) out.stack = scrub(err.stack);
    const code = (err as { code?: unknown }).code;
    if ((typeof code === 'string' && /^[\w.-]{1,40}$/.test(code)) || typeof code === 'number') out.code = String(code);
    if (err.cause !== undefined && depth < MAX_CAUSES) out.cause = serialize(err.cause, depth + 1);
    return out;
  };
  return (err) => serialize(err, 0);
}

/** A value thrown or logged that is not an Error: a string, or an object already shaped like one. */
function fromPlain(err: unknown, scrub: (text: string) => string): LoggedError {
  if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') {
    const plain = err as { type?: unknown; name?: unknown; message: string; stack?: unknown };
    const type = typeof plain.type === 'string' ? plain.type : typeof plain.name === 'string' ? plain.name : 'Error';
    return {
      type,
      message: scrub(plain.message),
      ...(typeof plain.stack === 'string' ? { stack: scrub(plain.stack) } : {}),
    };
  }
  return { type: typeof err === 'string' ? 'Error' : typeof err, message: scrub(String(err)) };
}

/**
 * Secrets the process was given through its environment: gateway keys,
 * admin keys, and the value of every variable whose name says it holds a
 * credential (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, the password of
 * a `*_URL`), which covers the provider keys config.yaml points at.
 */
export function environmentSecrets(env: NodeJS.ProcessEnv, extra: readonly string[] = []): string[] {
  const secrets = new Set(extra);
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    if (/(_KEY|_KEYS|_TOKEN|_SECRET)$|PASSWORD/i.test(name)) {
      for (const part of value.split(',')) if (part.trim().length >= 8) secrets.add(part.trim());
    } else if (/_URL$/i.test(name)) {
      const password = /^[a-z][\w+.-]*:\/\/[^/@\s]*:([^/@\s]+)@/i.exec(value)?.[1];
      if (password) secrets.add(decodeURIComponent(password));
    }
  }
  return [...secrets];
}
