import type { Writable } from 'node:stream';

/** Sockets corked by {@link corkForTurn} and not yet released, each with the token of its release. */
const corked = new Map<Writable, symbol>();

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
  const token = Symbol('turn');
  corked.set(socket, token);
  socket.cork();
  setImmediate(() => {
    if (corked.get(socket) !== token) return;
    corked.delete(socket);
    socket.uncork();
  });
}

/**
 * Sends what {@link corkForTurn} holds for `socket` now instead of at the end
 * of the turn; later writes in the same turn are held again. For a command
 * whose answer the rest of the turn's work does not need, when nothing else
 * would share the syscall.
 */
export function releaseTurn(socket: Writable): void {
  if (!corked.delete(socket)) return;
  socket.uncork();
}
