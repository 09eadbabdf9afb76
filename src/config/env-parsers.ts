import { z } from 'zod';

/**
 * zod building blocks for environment variables, which are always strings.
 * Booleans accept true/false, 1/0, yes/no, on/off (any case).
 */

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

export function envBoolean(defaultValue: boolean) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value.trim() === '') return defaultValue;
      const v = value.trim().toLowerCase();
      if (TRUE.has(v)) return true;
      if (FALSE.has(v)) return false;
      ctx.addIssue({ code: 'custom', message: `expected a boolean (true/false), got '${value}'` });
      return z.NEVER;
    });
}

export function envNumber(defaultValue: number, bounds: { min?: number; max?: number; int?: boolean } = {}) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value.trim() === '') return defaultValue;
      const n = Number(value);
      const problem =
        !Number.isFinite(n) ? 'a number'
        : bounds.int && !Number.isInteger(n) ? 'an integer'
        : bounds.min !== undefined && n < bounds.min ? `a number >= ${bounds.min}`
        : bounds.max !== undefined && n > bounds.max ? `a number <= ${bounds.max}`
        : undefined;
      if (problem) {
        ctx.addIssue({ code: 'custom', message: `expected ${problem}, got '${value}'` });
        return z.NEVER;
      }
      return n;
    });
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
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value.trim() === '') return defaultValue;
      const v = value.trim().toLowerCase();
      if ((values as readonly string[]).includes(v)) return v as T[number];
      ctx.addIssue({ code: 'custom', message: `expected one of ${values.join(', ')}, got '${value}'` });
      return z.NEVER;
    });
}

/** A number that may be left unset (`undefined`), with the same checks as {@link envNumber}. */
export function envOptionalNumber(bounds: { min?: number; max?: number; int?: boolean } = {}) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value.trim() === '') return undefined;
      const n = Number(value);
      const problem =
        !Number.isFinite(n) ? 'a number'
        : bounds.int && !Number.isInteger(n) ? 'an integer'
        : bounds.min !== undefined && n < bounds.min ? `a number >= ${bounds.min}`
        : bounds.max !== undefined && n > bounds.max ? `a number <= ${bounds.max}`
        : undefined;
      if (problem) {
        ctx.addIssue({ code: 'custom', message: `expected ${problem}, got '${value}'` });
        return z.NEVER;
      }
      return n;
    });
}
