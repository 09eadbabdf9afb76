import type { Request } from 'express';

/** Label of requests that matched no known route (404s, probes of random paths). */
const UNMATCHED_ENDPOINT = 'unmatched';

/**
 * Turns a request into a bounded `endpoint` label: the route pattern
 * (`/v1/models/{model}`), never the raw path, so a client cannot create a
 * metric series per URL it invents.
 *
 * Known patterns (OpenAPI style, `{param}`) are matched against the path
 * first, which also names requests rejected before routing (401, 413); then
 * the Express route that handled the request; else {@link UNMATCHED_ENDPOINT}.
 */
export class EndpointLabeler {
  private readonly exact = new Set<string>();
  private readonly templated: { pattern: string; regex: RegExp }[] = [];

  constructor(patterns: Iterable<string>) {
    for (const pattern of patterns) {
      if (!pattern.includes('{')) {
        this.exact.add(pattern);
        continue;
      }
      const source = pattern
        .split(/(\{[^}]+\})/)
        .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('');
      this.templated.push({ pattern, regex: new RegExp(`^${source}$`) });
    }
  }

  label(req: Request): string {
    const path = req.path.length > 1 && req.path.endsWith('/') ? req.path.slice(0, -1) : req.path;
    if (this.exact.has(path)) return path;
    for (const { pattern, regex } of this.templated) if (regex.test(path)) return pattern;
    const routePath = (req.route as { path?: unknown } | undefined)?.path;
    if (typeof routePath === 'string') return routePath.replace(/:(\w+)/g, '{$1}');
    return UNMATCHED_ENDPOINT;
  }
}
