import type { ChatCompletion, GatewayCacheMark, Usage } from './types.ts';

const USAGE_KEY = '"usage":';

/** The mark of a reply served from the gateway's cache; a hit with a similarity is the semantic cache's. */
export function gatewayCacheMark(hit: { similarity?: number | undefined }): GatewayCacheMark {
  return { hit: true, type: hit.similarity === undefined ? 'exact' : 'semantic' };
}

/**
 * The stored `chat.completion` JSON with `mark` added to its usage, and that
 * usage. The gateway writes `usage` as the reply's last field, so only that
 * tail is parsed and rewritten (a hit is served without parsing the whole
 * reply); a reply of another shape is parsed whole. A key inside a string
 * cannot match: its quotes are escaped there.
 */
export function withUsageMark(json: string, mark: GatewayCacheMark): { json: string; usage?: Usage } {
  const at = json.lastIndexOf(USAGE_KEY);
  if (at > 0 && json.endsWith('}')) {
    try {
      const usage = JSON.parse(json.slice(at + USAGE_KEY.length, -1)) as Usage | null;
      if (usage !== null && typeof usage === 'object' && typeof usage.prompt_tokens === 'number') {
        const marked = { ...usage, gateway_cache: mark };
        // An embeddings reply counts no completion tokens; its usage is still priced as a Usage.
        return {
          json: `${json.slice(0, at + USAGE_KEY.length)}${JSON.stringify(marked)}}`,
          usage: { ...marked, completion_tokens: usage.completion_tokens ?? 0 },
        };
      }
    } catch {
      // Not the last field: parsed whole below.
    }
  }
  const completion = JSON.parse(json) as ChatCompletion;
  if (!completion.usage) return { json };
  completion.usage.gateway_cache = mark;
  return { json: JSON.stringify(completion), usage: completion.usage };
}
