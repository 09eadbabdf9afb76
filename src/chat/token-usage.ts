import type { Usage } from './types.ts';

/**
 * Token counts by type, as every part of the gateway that accounts for them
 * reads them: the adapters build OpenAI-shaped {@link Usage} from them, the
 * stream protocol carries them, and prices, budgets, metrics and `/stats`
 * are computed from them.
 *
 * The types nest as in OpenAI's usage: `cachedRead`, `cacheWrite` are part
 * of `prompt` and `reasoning` is part of `completion`; `cacheWrite1h` is part
 * of `cacheWrite`.
 */
export interface TokenCounts {
  prompt: number;
  completion: number;
  /** Prompt tokens read from the upstream's prompt cache. */
  cachedRead: number;
  /** Prompt tokens written to the upstream's prompt cache (any retention). */
  cacheWrite: number;
  /** Of `cacheWrite`, those kept for an hour (Anthropic's `ttl: '1h'`). */
  cacheWrite1h: number;
  /** Completion tokens spent on reasoning or thinking. */
  reasoning: number;
}

/** Counts an upstream reported; a detail left undefined was not reported and stays out of the usage object. */
export interface ReportedCounts {
  prompt: number;
  completion: number;
  cachedRead?: number | undefined;
  cacheWrite?: number | undefined;
  cacheWrite1h?: number | undefined;
  reasoning?: number | undefined;
}

/** OpenAI-shaped usage with the details objects the upstream gave counts for. */
export function usageOf(counts: ReportedCounts): Usage {
  const usage: Usage = {
    prompt_tokens: counts.prompt,
    completion_tokens: counts.completion,
    total_tokens: counts.prompt + counts.completion,
  };
  if (counts.cachedRead !== undefined || counts.cacheWrite !== undefined) {
    usage.prompt_tokens_details = { cached_tokens: counts.cachedRead ?? 0 };
    if (counts.cacheWrite !== undefined) usage.prompt_tokens_details.cache_write_tokens = counts.cacheWrite;
    if (counts.cacheWrite1h !== undefined) usage.prompt_tokens_details.cache_write_1h_tokens = counts.cacheWrite1h;
  }
  if (counts.reasoning !== undefined) usage.completion_tokens_details = { reasoning_tokens: counts.reasoning };
  return usage;
}

/** The counts of a usage object; details it lacks are 0. */
export function countsOf(
  usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens' | 'prompt_tokens_details' | 'completion_tokens_details'>,
): TokenCounts {
  return {
    prompt: usage.prompt_tokens,
    completion: usage.completion_tokens,
    cachedRead: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWrite: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    cacheWrite1h: usage.prompt_tokens_details?.cache_write_1h_tokens ?? 0,
    reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** No tokens. */
export function zeroCounts(): TokenCounts {
  return { prompt: 0, completion: 0, cachedRead: 0, cacheWrite: 0, cacheWrite1h: 0, reasoning: 0 };
}

/**
 * The sum of several usages (the `n` calls of a fan-out); a details object
 * is kept when any part had it, so a reported 0 stays reported.
 */
export function sumUsage(usages: readonly Usage[]): Usage {
  let promptDetails = false;
  let cacheWrites = false;
  let cacheWrites1h = false;
  let reasoning = false;
  const total = zeroCounts();
  for (const usage of usages) {
    const details = usage.prompt_tokens_details;
    promptDetails ||= details !== undefined;
    cacheWrites ||= details?.cache_write_tokens !== undefined;
    cacheWrites1h ||= details?.cache_write_1h_tokens !== undefined;
    reasoning ||= usage.completion_tokens_details !== undefined;
    const counts = countsOf(usage);
    for (const key of Object.keys(total) as Array<keyof TokenCounts>) total[key] += counts[key];
  }
  return usageOf({
    prompt: total.prompt,
    completion: total.completion,
    cachedRead: promptDetails ? total.cachedRead : undefined,
    cacheWrite: cacheWrites ? total.cacheWrite : undefined,
    cacheWrite1h: cacheWrites1h ? total.cacheWrite1h : undefined,
    reasoning: reasoning ? total.reasoning : undefined,
  });
}
