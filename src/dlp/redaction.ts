import type { EntityType } from './entities.ts';
import type { Finding } from './recognizer.ts';

/**
 * Numbered, typed placeholders for one request: the first e-mail address
 * becomes `<EMAIL_ADDRESS_1>`, the next different one `<EMAIL_ADDRESS_2>`,
 * and the same value (by its normalized key, so `(415) 555-2671` and
 * `+1 415 555 2671` are one number) keeps its placeholder in every message.
 * Numbering follows the order of first appearance, so a conversation re-sent
 * with one more turn keeps the placeholders of its earlier turns.
 *
 * Lives only as long as the request; the values are never stored.
 */
export class PlaceholderRegistry {
  private readonly byValue = new Map<string, string>();
  private readonly counters = new Map<EntityType, number>();
  private readonly originals = new Map<string, string>();

  /** The placeholder of a value; `text` (its spelling at first sight) is kept for {@link originalsSnapshot}. */
  placeholderFor(finding: Pick<Finding, 'entity' | 'key'>, text?: string): string {
    const id = `${finding.entity}\u0000${finding.key}`;
    let placeholder = this.byValue.get(id);
    if (placeholder === undefined) {
      const n = (this.counters.get(finding.entity) ?? 0) + 1;
      this.counters.set(finding.entity, n);
      placeholder = `<${finding.entity}_${n}>`;
      this.byValue.set(id, placeholder);
      if (text !== undefined) this.originals.set(placeholder, text);
    }
    return placeholder;
  }

  /** Placeholder -> value as first written, for restoring a reply (DLP_RESTORE); a copy, so later placeholders are not in it. */
  originalsSnapshot(): ReadonlyMap<string, string> {
    return new Map(this.originals);
  }
}

/** `text` with every finding (disjoint, sorted by start) replaced by its placeholder. */
export function redactText(text: string, findings: readonly Finding[], registry: PlaceholderRegistry): string {
  if (findings.length === 0) return text;
  let out = '';
  let cursor = 0;
  for (const finding of findings) {
    out += text.slice(cursor, finding.start) + registry.placeholderFor(finding, text.slice(finding.start, finding.end));
    cursor = finding.end;
  }
  return out + text.slice(cursor);
}

const PLACEHOLDER = /<[A-Z][A-Z_]*_\d+>/g;

/** `text` with the placeholders of `originals` put back; `escape` adapts a value to where it goes (JSON text). */
export function restorePlaceholders(
  text: string,
  originals: ReadonlyMap<string, string>,
  escape: (value: string) => string = (v) => v,
): string {
  if (originals.size === 0 || !text.includes('<')) return text;
  return text.replace(PLACEHOLDER, (placeholder) => {
    const value = originals.get(placeholder);
    return value === undefined ? placeholder : escape(value);
  });
}
