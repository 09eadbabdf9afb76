import type { Redis } from 'ioredis';
import { ChatDispatcher } from '../../src/queue/chat-dispatcher.ts';
import type { StreamReader } from '../../src/streams/stream-reader.ts';

/**
 * A dispatcher that only reads reply streams, as the API does (`follow`): no
 * queue, places or workers behind it, for tests that write a job's reply
 * stream themselves, as a worker would.
 */
export function replyFollower(options: { reader: StreamReader; redis: Redis; prefix: string; graceMs: number }) {
  return new ChatDispatcher({
    config: () => ({}) as never,
    queues: {} as never,
    places: {} as never,
    workers: {} as never,
    ...options,
  });
}
