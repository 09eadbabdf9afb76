import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';

/**
 * How a stopping worker lets go of its BullMQ queue: it stops taking jobs,
 * waits until every job it took is settled (completed or failed in Redis)
 * and its queue connection is up (so the worker's last writes can go out;
 * a stop during an outage waits for Redis), then closes without waiting on
 * any connection.
 *
 * BullMQ's own close waits for its blocking connection's `end` event, which
 * ioredis never emits for a connection that is waiting to reconnect: a
 * worker told to stop while Redis was down stayed until its grace ran out,
 * even when Redis came back a second later with nothing left to do.
 *
 * Call it when the worker is created, so it sees every job the worker takes;
 * it returns the close. `connection` is the worker's BullMQ connection.
 */
export function settledClose(worker: Worker, connection: Redis): () => Promise<void> {
  let held = 0;
  let settled: (() => void) | undefined;
  worker.on('active', () => {
    held += 1;
  });
  const settle = () => {
    held = Math.max(0, held - 1);
    if (held === 0) settled?.();
  };
  worker.on('completed', settle);
  worker.on('failed', settle);
  return async () => {
    // Touches no connection: the fetch loop only stops asking for jobs.
    await worker.pause(true);
    if (held > 0) await new Promise<void>((resolve) => (settled = resolve));
    if (connection.status !== 'ready') await new Promise((resolve) => connection.once('ready', resolve));
    await worker.close(true);
  };
}
