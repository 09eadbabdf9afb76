import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * `BENCH_PIN=1`: the placement of the semantic-cost figures — the gateway's
 * processes and their Redis on one core, the load generator and the fake
 * upstream on the other, so what the gateway spends is measured on a core of
 * its own instead of against the load it serves. Needs two cores and
 * `taskset` (util-linux).
 */
export const pinned = process.env.BENCH_PIN === '1';

/** The core of the gateway and its Redis, and the core of the load generator and the upstream. */
export const GATEWAY_CORE = 0;
export const LOAD_CORE = 1;

/** Pins every thread of each process to `core` (`taskset -a -c -p`). */
export async function pin(core: number, pids: ReadonlyArray<number | undefined>): Promise<void> {
  for (const pid of pids) {
    if (pid) await run('taskset', ['-a', '-c', '-p', String(core), String(pid)]);
  }
}
