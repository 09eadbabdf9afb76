import type { DlpEngine } from '../../../src/dlp/engine.ts';
import type { EntityType } from '../../../src/dlp/entities.ts';
import type { EvalSample } from './eval-set.ts';

/** Precision and recall of one entity type. */
export interface EntityScore {
  entity: EntityType;
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  precision: number;
  recall: number;
  f1: number;
}

/** A finding or a miss that spoils the scores, with the generator that made the sample. */
export interface EvalError {
  kind: 'false-positive' | 'false-negative';
  entity: EntityType;
  generator: string;
  text: string;
}

/**
 * Scores the engine on a labelled set. A finding is a true positive when it
 * overlaps a gold span of the same entity type that no other finding has
 * taken; every other finding is a false positive (of its own type, so a
 * phone number found in an SSN look-alike costs PHONE_NUMBER precision), and
 * every gold span left is a false negative.
 */
export function evaluate(
  engine: DlpEngine,
  samples: readonly EvalSample[],
  threshold: number,
): { scores: EntityScore[]; errors: EvalError[] } {
  const counts = new Map<EntityType, { tp: number; fp: number; fn: number }>();
  const bump = (entity: EntityType, field: 'tp' | 'fp' | 'fn') => {
    const c = counts.get(entity) ?? { tp: 0, fp: 0, fn: 0 };
    c[field]++;
    counts.set(entity, c);
  };
  const errors: EvalError[] = [];
  for (const sample of samples) {
    const findings = engine.analyze(sample.text, { threshold });
    const open = [...sample.gold];
    for (const finding of findings) {
      const i = open.findIndex((g) => g.entity === finding.entity && g.start < finding.end && finding.start < g.end);
      if (i >= 0) {
        open.splice(i, 1);
        bump(finding.entity, 'tp');
      } else {
        bump(finding.entity, 'fp');
        errors.push({ kind: 'false-positive', entity: finding.entity, generator: sample.generator, text: sample.text });
      }
    }
    for (const gold of open) {
      bump(gold.entity, 'fn');
      errors.push({ kind: 'false-negative', entity: gold.entity, generator: sample.generator, text: sample.text });
    }
  }
  const entities = [...new Set([...samples.flatMap((s) => s.gold.map((g) => g.entity)), ...counts.keys()])];
  const scores = entities.map((entity) => {
    const c = counts.get(entity) ?? { tp: 0, fp: 0, fn: 0 };
    const precision = c.tp + c.fp === 0 ? 1 : c.tp / (c.tp + c.fp);
    const recall = c.tp + c.fn === 0 ? 1 : c.tp / (c.tp + c.fn);
    return {
      entity,
      truePositives: c.tp,
      falsePositives: c.fp,
      falseNegatives: c.fn,
      precision,
      recall,
      f1: precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall),
    };
  });
  return { scores, errors };
}
