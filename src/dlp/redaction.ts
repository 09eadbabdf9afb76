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

  placeholderFor(finding: Pick<Finding, 'entity' | 'key'>): string {
    const id = `${finding.entity}\u0000${finding.key}`;
    let placeholder = this.byValue.get(id);
    if (placeholder === undefined) {
      const n = (this.counters.get(finding.entity) ?? 0) + 1;
      this.counters.set(finding.entity, n);
      placeholder = `<${finding.entity}_${n}>`;
      this.byValue.set(id, placeholder);
    }
    return placeholder;
  }
}

/** `text` with every finding (disjoint, sorted by start) replaced by its placeholder. */
export function redactText(text: string, findings: readonly Finding[], registry: PlaceholderRegistry): string {
  if (findings.length === 0) return text;
  let out = '';
  let cursor = 0;
  for (const finding of findings) {
    out += text.slice(cursor, finding.start) + registry.placeholderFor(finding);
    cursor = finding.end;
  }
  return out + text.slice(cursor);
}
