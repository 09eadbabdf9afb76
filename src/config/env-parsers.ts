import { z } from 'zod';

/**
 * zod building blocks for environment variables, which are always strings.
 * Booleans accept true/false, 1/0, yes/no, on/off (any case).
 */

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/**
 * A variable that holds one word (trimmed, any case): `defaultValue` when unset or blank, else what `read` makes
 * of the lowercased word, or a start-up error saying what was `expected` when `read` returns undefined.
 */
function wordVariable<T>(defaultValue: T, expected: string, read: (word: string) => T | undefined) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value.trim() === '') return defaultValue;
      const result = read(value.trim().toLowerCase());
      if (result !== undefined) return result;
      ctx.addIssue({ code: 'custom', message: `expected ${expected}, got '${value}'` });
      return z.NEVER;
    });
}

export function envBoolean(defaultValue: boolean) {
  return wordVariable(defaultValue, 'a boolean (true/false)', (word) =>
    TRUE.has(word) ? true : FALSE.has(word) ? false : undefined,
  );
}

/** Bounds of a numeric variable. */
export interface NumberBounds {
  min?: number;
  max?: number;
  int?: boolean;
}

/** What is wrong with `n` ("an integer", "a number >= 1"...), or undefined when it fits. */
function numberProblem(n: number, bounds: NumberBounds): string | undefined {
  if (!Number.isFinite(n)) return 'a number';
  if (bounds.int && !Number.isInteger(n)) return 'an integer';
  if (bounds.min !== undefined && n < bounds.min) return `a number >= ${bounds.min}`;
  if (bounds.max !== undefined && n > bounds.max) return `a number <= ${bounds.max}`;
  return undefined;
}

function numberVariable<T>(whenUnset: T, bounds: NumberBounds) {
  return z
    .string()
    .optional()
    .transform((value, ctx): number | T => {
      if (value === undefined || value.trim() === '') return whenUnset;
      const n = Number(value);
      const problem = numberProblem(n, bounds);
      if (problem) {
        ctx.addIssue({ code: 'custom', message: `expected ${problem}, got '${value}'` });
        return z.NEVER;
      }
      return n;
    });
}

export function envNumber(defaultValue: number, bounds: NumberBounds = {}) {
  return numberVariable(defaultValue, bounds);
}

export function envString(defaultValue: string) {
  return z
    .string()
    .optional()
    .transform((value) => (value === undefined || value.trim() === '' ? defaultValue : value.trim()));
}

export function envOptionalString() {
  return z
    .string()
    .optional()
    .transform((value) => (value === undefined || value.trim() === '' ? undefined : value));
}

/** Comma-separated list; blanks dropped. */
export function envList() {
  return z
    .string()
    .optional()
    .transform((value) =>
      (value ?? '')
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0),
    );
}

export function envEnum<const T extends readonly [string, ...string[]]>(values: T, defaultValue: T[number]) {
  return wordVariable<T[number]>(defaultValue, `one of ${values.join(', ')}`, (word) =>
    (values as readonly string[]).includes(word) ? word : undefined,
  );
}

/** A number that may be left unset (`undefined`), with the same checks as {@link envNumber}. */
export function envOptionalNumber(bounds: NumberBounds = {}) {
  return numberVariable(undefined, bounds);
}
