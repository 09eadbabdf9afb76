/**
 * `Server-Timing` of a chat reply: `queue` (wait before a worker took the
 * job), `upstream` (the provider's time: whole call, or time to first token
 * when streamed) and `total` (gateway time until the reply, or until the
 * first token when streamed). Durations in ms.
 */
export function serverTiming(timings: { queue?: number | undefined; upstream?: number | undefined; total: number; cache?: string }): string {
  const parts: string[] = [];
  if (timings.cache) parts.push(`cache;desc="${timings.cache}"`);
  if (timings.queue !== undefined) parts.push(`queue;dur=${timings.queue}`);
  if (timings.upstream !== undefined) parts.push(`upstream;dur=${timings.upstream}`);
  parts.push(`total;dur=${timings.total.toFixed(1)}`);
  return parts.join(', ');
}
