import type { Label } from './pair-set.ts';

/**
 * Scoring of one evaluation run (scripts/semantic-eval.ts): what the gateway
 * answered for each pair, the per-category table, the totals, and the
 * threshold curve recomputed from the raw similarities. Pure functions, no I/O.
 */

/** What happened to one pair: `a` was sent first (a miss, stored), then `b`. */
export interface PairOutcome {
  id: string;
  category: string;
  label: Label;
  /** `X-Cache` of `a`; MISS unless something leaked between pairs. */
  cacheA: string;
  /** `X-Cache` of `b`: HIT (exact), SEMANTIC_HIT or MISS. */
  cacheB: string;
  /** `X-Cache-Similarity` of `b`, on a semantic hit. */
  gatewaySimilarity?: number;
  /** Cosine similarity of the embeddings of `a` and `b`, computed beside the gateway with the same model. */
  rawSimilarity: number;
  /**
   * When the gateway looks up in two stages: the static retriever's similarity
   * of `a` and `b` and the least one that makes `a` a candidate.
   */
  firstStage?: { similarity: number; threshold: number };
  /** The prompt guards (src/cache/prompt-guards.ts) of `a` and `b` agree. */
  guardsAgree: boolean;
  /** The verifier (src/cache/prompt-verifier.ts) accepts `b` against a cached `a`. */
  verified: boolean;
}

export function gatewayHit(o: PairOutcome): boolean {
  return o.cacheB === 'HIT' || o.cacheB === 'SEMANTIC_HIT';
}

/**
 * The decision the gateway would take at threshold `t`: an exact hit, or a
 * first-stage candidate (when there are two stages) similar enough for the
 * model, with the same guards, that the verifier accepts.
 */
export function hitAt(o: PairOutcome, t: number): boolean {
  const retrieved = !o.firstStage || o.firstStage.similarity >= o.firstStage.threshold;
  return o.cacheB === 'HIT' || (retrieved && o.rawSimilarity >= t && o.guardsAgree && o.verified);
}

export interface CategoryRow {
  category: string;
  label: Label;
  pairs: number;
  /** Hits the gateway served; for a near-miss category every one is a wrong answer. */
  hits: number;
  hitRate: number;
  medianSimilarity: number;
  /** Pairs at or above the threshold that the guards or the verifier turned into misses. */
  blockedByGuards: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function categoryRows(outcomes: readonly PairOutcome[], threshold: number): CategoryRow[] {
  const byCategory = new Map<string, PairOutcome[]>();
  for (const o of outcomes) byCategory.set(o.category, [...(byCategory.get(o.category) ?? []), o]);
  return [...byCategory.entries()].map(([category, list]) => {
    const hits = list.filter(gatewayHit).length;
    return {
      category,
      label: (list[0] as PairOutcome).label,
      pairs: list.length,
      hits,
      hitRate: hits / list.length,
      medianSimilarity: median(list.map((o) => o.rawSimilarity)),
      blockedByGuards: list.filter(
        (o) => o.cacheB === 'MISS' && o.rawSimilarity >= threshold && !(o.guardsAgree && o.verified),
      ).length,
    };
  });
}

export interface Totals {
  nearMisses: number;
  wrongHits: number;
  wrongHitRate: number;
  paraphrases: number;
  paraphraseHits: number;
  paraphraseHitRate: number;
}

function totalsOf(outcomes: readonly PairOutcome[], hit: (o: PairOutcome) => boolean): Totals {
  const nearMisses = outcomes.filter((o) => o.label === 'near_miss');
  const paraphrases = outcomes.filter((o) => o.label === 'paraphrase');
  const wrongHits = nearMisses.filter(hit).length;
  const paraphraseHits = paraphrases.filter(hit).length;
  return {
    nearMisses: nearMisses.length,
    wrongHits,
    wrongHitRate: nearMisses.length ? wrongHits / nearMisses.length : 0,
    paraphrases: paraphrases.length,
    paraphraseHits,
    paraphraseHitRate: paraphrases.length ? paraphraseHits / paraphrases.length : 0,
  };
}

/** Totals of what the gateway answered. */
export function totals(outcomes: readonly PairOutcome[]): Totals {
  return totalsOf(outcomes, gatewayHit);
}

export interface CurvePoint extends Totals {
  threshold: number;
}

/** Thresholds 0.80 to 0.99 by 0.01. */
/** 0.50 to 0.75 by 0.05 (with verification, low thresholds are worth seeing), then 0.80 to 0.99 by 0.01. */
export const CURVE_THRESHOLDS: readonly number[] = [
  ...Array.from({ length: 6 }, (_, i) => Math.round((0.5 + i * 0.05) * 100) / 100),
  ...Array.from({ length: 20 }, (_, i) => Math.round((0.8 + i * 0.01) * 100) / 100),
];

export function curve(
  outcomes: readonly PairOutcome[],
  thresholds: readonly number[] = CURVE_THRESHOLDS,
): CurvePoint[] {
  return thresholds.map((threshold) => ({ threshold, ...totalsOf(outcomes, (o) => hitAt(o, threshold)) }));
}

/** Pairs where the recomputed decision at the run's threshold differs from the gateway's (should be none). */
export function disagreements(outcomes: readonly PairOutcome[], threshold: number): PairOutcome[] {
  return outcomes.filter((o) => gatewayHit(o) !== hitAt(o, threshold));
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

export function formatCategoryTable(rows: readonly CategoryRow[]): string {
  const lines = [
    '| category | kind | pairs | hits | hit rate | median similarity | ≥ threshold, stopped by guards or verifier |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const kind = r.label === 'near_miss' ? 'near miss (hits are wrong)' : 'paraphrase';
    lines.push(
      `| ${r.category} | ${kind} | ${r.pairs} | ${r.hits} | ${pct(r.hitRate)} | ${r.medianSimilarity.toFixed(3)} | ${r.blockedByGuards} |`,
    );
  }
  return lines.join('\n');
}

export function formatTotals(t: Totals): string {
  return [
    `wrong hits:      ${t.wrongHits} / ${t.nearMisses} near-miss pairs = ${pct(t.wrongHitRate)}   (target <= 1 %)`,
    `paraphrase hits: ${t.paraphraseHits} / ${t.paraphrases} paraphrase pairs = ${pct(t.paraphraseHitRate)}   (target >= 60 %)`,
  ].join('\n');
}

export function formatCurve(points: readonly CurvePoint[]): string {
  const lines = [
    '| threshold | wrong hits | wrong-hit % | paraphrase hits | paraphrase-hit % |',
    '|---:|---:|---:|---:|---:|',
  ];
  for (const p of points) {
    lines.push(
      `| ${p.threshold.toFixed(2)} | ${p.wrongHits} | ${pct(p.wrongHitRate)} | ${p.paraphraseHits} | ${pct(p.paraphraseHitRate)} |`,
    );
  }
  return lines.join('\n');
}
