import type { EntityType } from './entities.ts';

/**
 * A match found by a recognizer, before context scoring, the threshold and
 * overlap resolution. Offsets are UTF-16 indexes into the scanned text.
 *
 * A candidate holds positions and a normalized key, never a copy of the raw
 * value in a form meant to leave the process: findings are turned into
 * counts (entity type -> number) before anything is logged or measured.
 */
export interface Candidate {
  entity: EntityType;
  start: number;
  end: number;
  /** Confidence in [0, 1] after validation, before context. */
  score: number;
  /**
   * The value in a canonical form (digits only for a card, E.164 for a phone
   * number, lower case for an e-mail address), so that two spellings of one
   * value get one placeholder within a request.
   */
  key: string;
  /** The recognizer that produced it; for tests and the evaluation script. */
  recognizer: string;
}

/** A candidate that survived scoring, the threshold and overlap resolution. */
export type Finding = Candidate;

/**
 * Words near a match that change its score, in the style of Presidio's
 * context enhancer: a word from `positive` among the {@link CONTEXT_WORDS_BEFORE}
 * words before the match (or the {@link CONTEXT_WORDS_AFTER} after it) adds
 * {@link CONTEXT_BOOST}; a word from `negative` among the
 * {@link NEGATIVE_WORDS_BEFORE} words right before it subtracts it; the nearest
 * such word decides. Words compare lower-cased and whole ("ssn", "phone"), or by
 * prefix when they end in `*` ("phone*" also matches "phones").
 */
export interface ContextRule {
  positive: readonly string[];
  negative?: readonly string[];
}

/** Presidio's default context similarity factor. */
export const CONTEXT_BOOST = 0.35;
export const CONTEXT_WORDS_BEFORE = 5;
export const CONTEXT_WORDS_AFTER = 2;
export const NEGATIVE_WORDS_BEFORE = 2;

/**
 * A recognizer finds candidates of one or more entity types in a text. It
 * runs its own patterns and validators and pushes what it accepts to `out`.
 * Recognizers are stateless between calls and synchronous.
 */
export interface Recognizer {
  readonly name: string;
  readonly entities: readonly EntityType[];
  /** Context words applied by the engine to this recognizer's candidates. */
  readonly context?: ContextRule;
  analyze(text: string, out: Candidate[]): void;
}
