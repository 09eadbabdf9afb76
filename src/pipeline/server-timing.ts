import type { AttemptRecord } from '../routing/fallback-dispatch.ts';

/**
 * `Server-Timing` of a chat reply: `queue` (wait before a worker took the
 * job), `upstream` (the provider's time: whole call, or time to first token
 * when streamed) and `total` (gateway time until the reply, or until the
 * first token when streamed). A routed request adds `attempt-<n>` per
 * deployment tried (`desc`: model, provider and outcome; `dur`: until its
 * first reply entry). Durations in ms.
 */
export function serverTiming(timings: {
  queue?: number | undefined;
  upstream?: number | undefined;
  total: number;
  cache?: string;
  attempts?: readonly AttemptRecord[] | undefined;
}): string {
  const parts: string[] = [];
  if (timings.cache) parts.push(`cache;desc="${timings.cache}"`);
  timings.attempts?.forEach((a, i) =>
    parts.push(`attempt-${i + 1};desc="${a.model} ${a.provider} ${a.outcome}";dur=${a.ms.toFixed(1)}`),
  );
  if (timings.queue !== undefined) parts.push(`queue;dur=${timings.queue}`);
  if (timings.upstream !== undefined) parts.push(`upstream;dur=${timings.upstream}`);
  parts.push(`total;dur=${timings.total.toFixed(1)}`);
  return parts.join(', ');
}
