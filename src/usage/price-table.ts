import { z } from 'zod';
import { NANO_PER_USD } from './key-usage.ts';

/**
 * The `prices` section of config.yaml: USD per million prompt and completion
 * tokens for each gateway model id. Spend, budgets and `/admin/keys/{id}/usage`
 * are computed from it and from the usage the provider reports; a model
 * without a price costs 0.
 */
export const modelPriceSchema = z.strictObject({
  /** USD per 1,000,000 prompt tokens. */
  input_per_million: z.number().min(0).max(1_000_000),
  /** USD per 1,000,000 completion tokens. */
  output_per_million: z.number().min(0).max(1_000_000),
});

export const priceTableSchema = z.record(z.string().min(1).max(256), modelPriceSchema).default({});

export type ModelPrice = z.output<typeof modelPriceSchema>;
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** Cost of one call in nano-USD, rounded to the nearest (an integer, so sums are exact). */
export function costNanoUsd(prices: PriceTable, model: string, promptTokens: number, completionTokens: number): number {
  const price = Object.hasOwn(prices, model) ? prices[model] : undefined;
  if (!price) return 0;
  // USD per million tokens = nano-USD per token / 1000.
  return Math.round(((promptTokens * price.input_per_million + completionTokens * price.output_per_million) * NANO_PER_USD) / 1_000_000);
}
