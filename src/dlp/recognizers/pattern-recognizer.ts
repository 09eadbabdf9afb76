import type { EntityType } from '../entities.ts';
import type { Candidate, ContextRule, Recognizer } from '../recognizer.ts';

/** One regular expression of a {@link PatternRecognizer}. */
export interface PatternSpec {
  /** Names the pattern in tests and the evaluation script. */
  name: string;
  /**
   * A global (`g`) expression. When it has a named group `value` (and the
   * `d` flag), that group is the reported span, so a keyword before a secret
   * ("AccountKey=") stays readable while the secret is replaced.
   */
  regex: RegExp;
  /** Score of a match before validation (and of one the validator keeps as is). */
  score: number;
  /**
   * Run the expression only when the text contains one of these strings, or
   * matches this (non-global) expression: a substring search, or one
   * expression without backtracking, is far cheaper than a regex scan over
   * text that cannot match.
   */
  requires?: readonly string[] | RegExp;
}

/** Options of {@link PatternRecognizer}. */
export interface PatternRecognizerOptions {
  name: string;
  entity: EntityType;
  patterns: readonly PatternSpec[];
  context?: ContextRule;
  /**
   * The score of a match: `pattern.score` to keep it, higher when a checksum
   * or parse proves it, 0 to reject it. Default: `pattern.score`.
   */
  validate?(value: string, pattern: PatternSpec): number;
  /** Canonical form of a value, the key of its placeholder. Default: the value. */
  normalize?(value: string): string;
  /**
   * Where in a value the validator rejected the scan resumes, when no match
   * could start before that point either. Default: one character after the
   * match's start.
   */
  resumeAfterRejected?(value: string): number | undefined;
}

/**
 * A recognizer made of regular expressions and an optional validator, like
 * Presidio's PatternRecognizer. When the validator rejects a match, the scan
 * resumes one character after the match's start rather than after its end,
 * so a real value right behind a rejected look-alike is still found.
 */
export class PatternRecognizer implements Recognizer {
  readonly name: string;
  readonly entities: readonly EntityType[];
  readonly context: ContextRule | undefined;
  private readonly entity: EntityType;
  private readonly patterns: readonly PatternSpec[];
  private readonly validate: ((value: string, pattern: PatternSpec) => number) | undefined;
  private readonly normalize: (value: string) => string;
  private readonly resumeAfterRejected: ((value: string) => number | undefined) | undefined;

  constructor(options: PatternRecognizerOptions) {
    for (const pattern of options.patterns) {
      if (!pattern.regex.global) throw new Error(`pattern ${pattern.name} of ${options.name} needs the g flag`);
    }
    this.name = options.name;
    this.entity = options.entity;
    this.entities = [options.entity];
    this.context = options.context;
    this.patterns = options.patterns;
    this.validate = options.validate;
    this.normalize = options.normalize ?? ((value) => value);
    this.resumeAfterRejected = options.resumeAfterRejected;
  }

  analyze(text: string, out: Candidate[]): void {
    for (const pattern of this.patterns) {
      const requires = pattern.requires;
      if (requires && !(requires instanceof RegExp ? requires.test(text) : requires.some((s) => text.includes(s))))
        continue;
      const regex = pattern.regex;
      regex.lastIndex = 0;
      let match: RegExpExecArray | null;
      while ((match = regex.exec(text)) !== null) {
        const span = match.indices?.groups?.value;
        const start = span ? span[0] : match.index;
        const end = span ? span[1] : match.index + match[0].length;
        const value = text.slice(start, end);
        const score = this.validate ? this.validate(value, pattern) : pattern.score;
        if (score > 0) {
          out.push({ entity: this.entity, start, end, score, key: this.normalize(value), recognizer: this.name });
        } else {
          const resume = this.resumeAfterRejected?.(value);
          regex.lastIndex = resume === undefined ? match.index + 1 : start + resume;
        }
        if (match[0].length === 0) regex.lastIndex++;
      }
    }
  }
}
