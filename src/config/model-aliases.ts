import { z } from 'zod';

/**
 * `model_aliases` of config.yaml: names and glob patterns (`*` any run of
 * characters, `?` one) that stand for a configured model. Clients with their
 * own model names (Claude Code asks for `claude-...` models for its main and
 * background calls) then reach a model the gateway serves. A configured model
 * always means itself; an exact alias wins over a pattern; patterns are tried
 * in file order.
 */

export const modelAliasesSchema = z.record(z.string().min(1).max(256), z.string().min(1).max(256)).optional();

export interface ModelAliases {
  /** The configured model `name` stands for, or undefined when no alias matches. */
  resolve(name: string): string | undefined;
  /** Every alias and its target, in file order (for documentation and listings). */
  readonly entries: ReadonlyArray<readonly [string, string]>;
}

function globToRegExp(glob: string): RegExp {
  const source = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`);
}

/** Builds the resolver; a target that is not a configured model is a message naming the alias. */
export function buildModelAliases(
  input: Readonly<Record<string, string>> | undefined,
  models: ReadonlySet<string>,
): ModelAliases | string {
  const entries = Object.entries(input ?? {});
  const exact = new Map<string, string>();
  const patterns: Array<{ pattern: RegExp; target: string }> = [];
  for (const [alias, target] of entries) {
    if (!models.has(target)) return `model_aliases.${alias}: '${target}' is not a model of any provider`;
    if (/[*?]/.test(alias)) patterns.push({ pattern: globToRegExp(alias), target });
    else exact.set(alias, target);
  }
  return {
    entries,
    resolve(name: string): string | undefined {
      const direct = exact.get(name);
      if (direct !== undefined) return direct;
      for (const { pattern, target } of patterns) if (pattern.test(name)) return target;
      return undefined;
    },
  };
}
