import type { Redis } from 'ioredis';
import type { Duplex } from 'node:stream';

const COALESCED = Symbol('gateway.coalescedWrites');

/**
 * Makes a connection send every command issued during one event-loop turn in
 * one socket write: the turn's first write corks the socket and a
 * `setImmediate` (after the turn's I/O callbacks) uncorks it.
 *
 * Why not ioredis' `enableAutoPipelining`: it keeps a single batch in flight
 * per connection and queues every later command until that batch's replies
 * are all back, which under load turns the connection into stop-and-wait
 * (measured: ~20 % fewer chat requests/s through the queue, and bare BullMQ
 * 30 % slower). Corking batches the writes (one syscall instead of one per
 * command, which is what costs on loopback) and lets batches overlap.
 *
 * Applied on every (re)connect, to the socket ioredis exposes as `stream`.
 */
export function coalesceWrites(redis: Redis): Redis {
  const patch = () => {
    const socket = (redis as unknown as { stream?: Duplex & { [COALESCED]?: true } }).stream;
    if (!socket || socket[COALESCED]) return;
    socket[COALESCED] = true;
    const write = socket.write;
    let corked = false;
    const uncork = () => {
      corked = false;
      socket.uncork();
    };
    socket.write = function coalescedWrite(this: Duplex, ...args: Parameters<Duplex['write']>) {
      if (!corked) {
        corked = true;
        socket.cork();
        setImmediate(uncork);
      }
      return write.apply(this, args);
    } as Duplex['write'];
  };
  redis.on('connect', patch);
  patch();
  return redis;
}
