import { UpstreamProtocolError } from './types.ts';

/**
 * The JSON of the `eventNumber`th event of an upstream stream, or the protocol error that says which event of
 * which upstream was malformed and how long it was: never its text, which may quote the prompt.
 */
export function parseEventJson(
  data: string,
  eventNumber: number,
  upstream: 'OpenAI' | 'Anthropic' | 'Gemini',
): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    throw new UpstreamProtocolError(
      `Malformed JSON in event ${eventNumber} of the ${upstream} upstream stream (${data.length} characters).`,
    );
  }
}

/** Absent, null or a string: what a schema's `z.string().nullish()` accepts, for the decoders' checks by hand. */
export function isOptionalString(value: unknown): boolean {
  return value == null || typeof value === 'string';
}

/**
 * Whether an event's JSON is an object with member `name`: the decoders ask their error schema only then, since a
 * failed parse of every chunk built an error object each time.
 */
export function hasMember(json: unknown, name: string): boolean {
  return typeof json === 'object' && json !== null && name in json;
}
