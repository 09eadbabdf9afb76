import { z } from 'zod';
import { zeroCounts, type TokenCounts } from '../chat/token-usage.ts';
import { NANO_PER_USD } from './key-usage.ts';

/**
 * The `prices` section of config.yaml: USD per million tokens of each type
 * for each gateway model id. Spend, budgets and `/admin/keys/{id}/usage`
 * are computed from it and from the usage the provider reports; a model
 * without a price costs 0.
 *
 * Only `input_per_million` and `output_per_million` are required (the format
 * before token types); a type without its own price is billed at the price
 * it falls back to, so an old table bills exactly as it did.
 */
const modelPriceSchema = z.strictObject({
  /** USD per 1,000,000 prompt tokens. */
  input_per_million: z.number().min(0).max(1_000_000),
  /** USD per 1,000,000 completion tokens. */
  output_per_million: z.number().min(0).max(1_000_000),
  /** USD per 1,000,000 prompt tokens read from the upstream's prompt cache. @defaultValue `input_per_million` */
  cached_input_per_million: z.number().min(0).max(1_000_000).optional(),
  /** USD per 1,000,000 prompt tokens written to the upstream's prompt cache for 5 minutes (Anthropic's default retention). @defaultValue `input_per_million` */
  cache_write_per_million: z.number().min(0).max(1_000_000).optional(),
  /** USD per 1,000,000 prompt tokens written to the upstream's prompt cache for 1 hour. @defaultValue `cache_write_per_million` */
  cache_write_1h_per_million: z.number().min(0).max(1_000_000).optional(),
  /** USD per 1,000,000 reasoning tokens, for models that price them apart from output. @defaultValue `output_per_million` */
  reasoning_per_million: z.number().min(0).max(1_000_000).optional(),
});

export const priceTableSchema = z.record(z.string().min(1).max(256), modelPriceSchema).default({});

export type ModelPrice = z.output<typeof modelPriceSchema>;
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** Token counts to price: prompt and completion, and any details known. */
export type PricedCounts = Pick<TokenCounts, 'prompt' | 'completion'> & Partial<TokenCounts>;

/** One line of a bill: tokens of one type, their price and cost. */
export interface BillLine {
  type: 'input' | 'cached_input' | 'cache_write_5m' | 'cache_write_1h' | 'output' | 'reasoning';
  tokens: number;
  /** USD per 1,000,000 tokens. */
  usdPerMillion: number;
}

/**
 * The lines of a call's bill. Tokens are split so that each is priced once:
 * prompt = input + cached read + cache writes, completion = output +
 * reasoning. Counts that do not add up (a detail larger than its total) are
 * clamped, so a malformed report never yields a negative line.
 */
export function billLines(price: ModelPrice, counts: PricedCounts): BillLine[] {
  const c = { ...zeroCounts(), ...counts };
  const cachedRead = Math.min(c.cachedRead, c.prompt);
  const cacheWrite = Math.min(c.cacheWrite, c.prompt - cachedRead);
  const cacheWrite1h = Math.min(c.cacheWrite1h, cacheWrite);
  const reasoning = Math.min(c.reasoning, c.completion);
  const write5m = price.cache_write_per_million ?? price.input_per_million;
  return [
    { type: 'input', tokens: c.prompt - cachedRead - cacheWrite, usdPerMillion: price.input_per_million },
    {
      type: 'cached_input',
      tokens: cachedRead,
      usdPerMillion: price.cached_input_per_million ?? price.input_per_million,
    },
    { type: 'cache_write_5m', tokens: cacheWrite - cacheWrite1h, usdPerMillion: write5m },
    { type: 'cache_write_1h', tokens: cacheWrite1h, usdPerMillion: price.cache_write_1h_per_million ?? write5m },
    { type: 'output', tokens: c.completion - reasoning, usdPerMillion: price.output_per_million },
    { type: 'reasoning', tokens: reasoning, usdPerMillion: price.reasoning_per_million ?? price.output_per_million },
  ];
}

function priceOf(prices: PriceTable, model: string): ModelPrice | undefined {
  return Object.hasOwn(prices, model) ? prices[model] : undefined;
}

/** Cost of one call in nano-USD, rounded to the nearest (an integer, so sums are exact). */
export function costNanoUsd(prices: PriceTable, model: string, counts: PricedCounts): number {
  const price = priceOf(prices, model);
  if (!price) return 0;
  let microUsdTimesTokens = 0;
  for (const line of billLines(price, counts)) microUsdTimesTokens += line.tokens * line.usdPerMillion;
  // USD per million tokens = nano-USD per token / 1000.
  return Math.round((microUsdTimesTokens * NANO_PER_USD) / 1_000_000);
}

/**
 * What the upstream's prompt cache saved on a call, nano-USD: cached reads
 * at the input price minus what they cost, less the premium of cache writes
 * over the input price. Negative when writes cost more than reads saved (a
 * prefix written and never read again).
 */
export function promptCacheSavingNanoUsd(prices: PriceTable, model: string, counts: PricedCounts): number {
  const price = priceOf(prices, model);
  if (!price) return 0;
  const uncached = costNanoUsd({ [model]: price }, model, {
    prompt: counts.prompt,
    completion: counts.completion,
    reasoning: counts.reasoning ?? 0,
  });
  return uncached - costNanoUsd(prices, model, counts);
}
