import type { SseFrame } from './dialect.ts';

/** Serializes one SSE event; `data` never contains a newline here since it is compact JSON. */
export function serializeSseFrame(frame: SseFrame): string {
  return frame.event === undefined ? `data: ${frame.data}\n\n` : `event: ${frame.event}\ndata: ${frame.data}\n\n`;
}

/** Data that is not JSON, for the `malformedChunkAt` behaviour. */
export const MALFORMED_DATA = '{"this is": not json';
