import type { Writable } from 'node:stream';

/** Sockets corked by {@link corkForTurn} and not yet released. */
const corked = new WeakSet<Writable>();

/**
 * Holds `socket`'s writes for the rest of this event-loop turn: the first call
 * in a turn corks it, and a `setImmediate` (after the turn's I/O callbacks)
 * uncorks it, so everything written meanwhile leaves in one syscall. On
 * loopback each write that wakes another process is what costs (profiled:
 * tens of µs per write on the development VM); the data waits for the turn
 * to end, never for later ones.
 */
export function corkForTurn(socket: Writable): void {
  if (corked.has(socket)) return;
  corked.add(socket);
  socket.cork();
  setImmediate(() => {
    corked.delete(socket);
    socket.uncork();
  });
}
