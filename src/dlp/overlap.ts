import type { Candidate } from './recognizer.ts';

/**
 * Resolves overlapping candidates so that every character belongs to at most
 * one finding: the higher score wins, then the longer span (an IBAN over the
 * card-like digits inside it), then the earlier one, then the recognizer
 * listed first (a JWT over the same span found as a bearer token). Returns the
 * winners sorted by start.
 */
export function resolveOverlaps(candidates: readonly Candidate[]): Candidate[] {
  if (candidates.length <= 1) return [...candidates];
  const ranked = candidates
    .map((candidate, order) => ({ candidate, order }))
    .sort(
      (a, b) =>
        b.candidate.score - a.candidate.score ||
        b.candidate.end - b.candidate.start - (a.candidate.end - a.candidate.start) ||
        a.candidate.start - b.candidate.start ||
        a.order - b.order,
    );
  // Accepted spans, sorted by start and disjoint, so one binary search finds a clash.
  const accepted: Candidate[] = [];
  for (const { candidate } of ranked) {
    const i = placeAmong(accepted, candidate);
    if (i >= 0) accepted.splice(i, 0, candidate);
  }
  return accepted;
}

/** Whether `candidate` overlaps one of `spans` (disjoint and sorted by start, as {@link resolveOverlaps} returns them). */
export function overlapsAny(spans: readonly Candidate[], candidate: Candidate): boolean {
  return placeAmong(spans, candidate) < 0;
}

/** Where `candidate` would go among `spans` (disjoint, sorted by start), or -1 when it overlaps one of them. */
function placeAmong(spans: readonly Candidate[], candidate: Candidate): number {
  const i = firstEndingAfter(spans, candidate.start);
  return i < spans.length && spans[i]!.start < candidate.end ? -1 : i;
}

/** Index of the first span in `spans` (disjoint, sorted) whose end is after `position`. */
function firstEndingAfter(spans: readonly Candidate[], position: number): number {
  let low = 0;
  let high = spans.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (spans[mid]!.end <= position) low = mid + 1;
    else high = mid;
  }
  return low;
}
