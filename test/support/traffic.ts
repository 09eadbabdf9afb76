/** Outcome of one request sent by {@link sendChat}. */
export interface Outcome {
  /** HTTP status, or 0 when the connection failed, -1 when the client gave up (a hang). */
  status: number;
  code?: string;
  /** Streamed replies: ended with [DONE], with an error event, or neither (cut). */
  streamEnd?: 'done' | 'error' | 'cut';
  ms: number;
  startedAt: number;
}

/** Sends one chat completion with a client-side timeout and classifies how it ended. */
export async function sendChat(baseUrl: string, key: string, body: unknown, timeoutMs: number): Promise<Outcome> {
  const startedAt = Date.now();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const res = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    const text = await res.text();
    const outcome: Outcome = { status: res.status, ms: Date.now() - startedAt, startedAt };
    if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      outcome.streamEnd = text.includes('data: [DONE]') ? 'done' : text.includes('event: error') ? 'error' : 'cut';
    } else {
      try {
        outcome.code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
      } catch {
        // not JSON
      }
    }
    return outcome;
  } catch {
    return { status: controller.signal.aborted ? -1 : 0, ms: Date.now() - startedAt, startedAt };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `workers` loops sending requests until `until()` is true; returns every outcome. */
export async function trafficLoop(
  workers: number,
  until: () => boolean,
  send: (i: number) => Promise<Outcome>,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let i = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!until()) outcomes.push(await send(i++));
    }),
  );
  return outcomes;
}

export function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1;
  return out;
}
