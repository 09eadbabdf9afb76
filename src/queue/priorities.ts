/**
 * BullMQ priorities of chat jobs (1 is served first). Every job gets one, so
 * interactive requests always overtake queued batch work on a busy provider.
 *
 * | source                                   | priority |
 * |------------------------------------------|----------|
 * | `service_tier: "priority"`               | 1        |
 * | interactive (`auto`, `default`, none)    | 10       |
 * | `service_tier: "flex"` (tolerant of queuing) | 100  |
 * | asynchronous jobs (`/v1/chat/completions/jobs`) | 1000 |
 */
export const PRIORITIES = {
  priority: 1,
  interactive: 10,
  flex: 100,
  batch: 1000,
} as const;

/** The priority of a synchronous or streamed request with this `service_tier`. */
export function priorityFor(serviceTier: string | undefined): number {
  if (serviceTier === 'priority') return PRIORITIES.priority;
  if (serviceTier === 'flex') return PRIORITIES.flex;
  return PRIORITIES.interactive;
}
