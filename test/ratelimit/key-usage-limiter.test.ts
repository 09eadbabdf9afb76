import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeKeyPolicy } from '../../src/auth/key-policy.ts';
import { createPrincipal } from '../../src/auth/principal.ts';
import type { ChatRequest } from '../../src/chat/types.ts';
import {
  BudgetExceededError,
  ModelNotAllowedError,
  RateLimitExceededError,
  ServiceUnavailableError,
} from '../../src/errors/catalog.ts';
import { KeyUsageLimiter } from '../../src/ratelimit/key-usage-limiter.ts';
import { budgetPeriod, estimatePromptTokens, KeyGovernor } from '../../src/usage/key-governor.ts';
import type { UsageDelta } from '../../src/usage/key-usage.ts';
import { costNanoUsd } from '../../src/usage/price-table.ts';
import { UsageRecorder } from '../../src/usage/usage-recorder.ts';
import { SqliteKeyStore } from '../../src/auth/sqlite-key-store.ts';
import { freePort } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/** The token and budget limiter against a real Redis, and the governor around it. */

const redis = testRedis();
const prefix = uniquePrefix('key-usage');
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

const day = { periodId: '2026-11-24', ttlSeconds: 3_600 };

describe('KeyUsageLimiter', () => {
  it('admits while used + in-flight estimates are below the limit: 40 concurrent admissions of 30 against 100 admit exactly 4', async () => {
    const limiter = new KeyUsageLimiter({ redis, prefix });
    const decisions = await Promise.all(
      Array.from({ length: 40 }, () =>
        limiter.admit('k-tpm', { tokensPerMinute: 100 }, { tokens: 30, costNanoUsd: 0, ...day }),
      ),
    );
    const admitted = decisions.filter((d) => 'reservation' in d);
    expect(admitted).toHaveLength(4);
    const refusal = decisions.find((d) => 'refusal' in d);
    expect(refusal && 'refusal' in refusal ? refusal.refusal : undefined).toMatchObject({
      reason: 'tokens',
      used: 120,
    });

    // Completion replaces each estimate by the real usage (5): 20 used, so the next admissions fit again.
    for (const d of admitted)
      if ('reservation' in d) await limiter.settle(d.reservation, { tokens: 5, costNanoUsd: 0 });
    const after = await Promise.all(
      Array.from({ length: 10 }, () =>
        limiter.admit('k-tpm', { tokensPerMinute: 100 }, { tokens: 30, costNanoUsd: 0, ...day }),
      ),
    );
    // 20 + 30k < 100 for k = 0, 1, 2: three more.
    expect(after.filter((d) => 'reservation' in d)).toHaveLength(3);
  });

  it('tokens leave the window after a minute (clock from the caller here)', async () => {
    let now = 1_000_000;
    const limiter = new KeyUsageLimiter({ redis, prefix, now: () => now });
    expect(
      'reservation' in
        (await limiter.admit('k-window', { tokensPerMinute: 10 }, { tokens: 50, costNanoUsd: 0, ...day })),
    ).toBe(true);
    const refused = await limiter.admit('k-window', { tokensPerMinute: 10 }, { tokens: 1, costNanoUsd: 0, ...day });
    expect('refusal' in refused && refused.refusal).toMatchObject({ reason: 'tokens', retryAfterMs: 60_000 });
    now += 60_001;
    expect(
      'reservation' in
        (await limiter.admit('k-window', { tokensPerMinute: 10 }, { tokens: 1, costNanoUsd: 0, ...day })),
    ).toBe(true);
  });

  it('a budget counts settled spend and in-flight estimates; a failed call gives its estimate back', async () => {
    const limiter = new KeyUsageLimiter({ redis, prefix });
    const limits = { budgetNanoUsd: 1_000 };
    // No counter for the period yet: the caller must seed it from the key store first.
    const unseeded = await limiter.admit('k-budget', limits, { tokens: 0, costNanoUsd: 600, ...day });
    expect('refusal' in unseeded && unseeded.refusal.reason).toBe('unseeded');
    await limiter.seed('k-budget', day.periodId, 0, day.ttlSeconds);
    await limiter.seed('k-budget', day.periodId, 5_000, day.ttlSeconds); // a second replica's seed does not overwrite
    const first = await limiter.admit('k-budget', limits, { tokens: 0, costNanoUsd: 600, ...day });
    const second = await limiter.admit('k-budget', limits, { tokens: 0, costNanoUsd: 600, ...day });
    const third = await limiter.admit('k-budget', limits, { tokens: 0, costNanoUsd: 600, ...day });
    expect(['reservation' in first, 'reservation' in second, 'refusal' in third]).toEqual([true, true, true]);
    if ('reservation' in second) await limiter.settle(second.reservation, { tokens: 0, costNanoUsd: 0 });
    if ('reservation' in first) await limiter.settle(first.reservation, { tokens: 0, costNanoUsd: 999 });
    expect(Number(await redis.get(`${prefix}:vk:spend:{k-budget}:${day.periodId}`))).toBe(999);
    expect('reservation' in (await limiter.admit('k-budget', limits, { tokens: 0, costNanoUsd: 600, ...day }))).toBe(
      true,
    );
    const over = await limiter.admit('k-budget', limits, { tokens: 0, costNanoUsd: 1, ...day });
    expect('refusal' in over && over.refusal.reason).toBe('budget');
    // Another period has its own counter, seeded from what the key store recorded.
    await limiter.seed('k-budget', '2026-11-25', 999, 60);
    expect(
      'reservation' in
        (await limiter.admit('k-budget', limits, {
          tokens: 0,
          costNanoUsd: 1,
          periodId: '2026-11-25',
          ttlSeconds: 60,
        })),
    ).toBe(true);
    expect(
      'refusal' in
        (await limiter.admit('k-budget', limits, {
          tokens: 0,
          costNanoUsd: 1,
          periodId: '2026-11-25',
          ttlSeconds: 60,
        })),
    ).toBe(true);
  });
});

const request = (content: string, extra: Partial<ChatRequest> = {}) =>
  ({ model: 'a-4o', messages: [{ role: 'user', content }], stream: false, ...extra }) as ChatRequest;

describe('KeyGovernor', () => {
  it('a key without token limit or budget is admitted without touching Redis', async () => {
    // A client on a port nothing listens on, failing at once: any command would reject.
    const dead = new Redis({
      port: await freePort(),
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    const rows: UsageDelta[] = [];
    const governor = new KeyGovernor({
      limiter: new KeyUsageLimiter({ redis: dead, prefix }),
      recorder: new UsageRecorder({ store: { addUsage: async (d) => void rows.push(...d) }, flushMs: 10 }),
      prices: () => ({ 'a-4o': { input_per_million: 1, output_per_million: 2 } }),
      recordedSpend: () => Promise.reject(new Error('never asked: no budget')),
    });
    const principal = createPrincipal({
      keyHash: 'h',
      owner: 'o',
      maskedKey: 'm',
      admin: false,
      keyId: 'key_1',
      policy: mergeKeyPolicy({}, { rate_limit: { requests: 5 }, metadata: { team: 't' } }),
    });
    const call = await governor.admit(principal, request('hello'));
    expect(call?.reservation).toBeUndefined();
    await governor.finish(call, {
      model: 'a-4o',
      usage: { promptTokens: 1_000_000, completionTokens: 500_000 },
      failed: false,
      coalesced: false,
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(rows).toEqual([
      {
        keyId: 'key_1',
        day: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        model: 'a-4o',
        requests: 1,
        promptTokens: 1_000_000,
        completionTokens: 500_000,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        costNanoUsd: 2 * 1e9,
      },
    ]);
    expect(dead.status).not.toBe('ready');
    dead.disconnect();
  });

  it('refuses a model outside the patterns (403), a used-up token limit (429) and budget (429 budget_exceeded)', async () => {
    const store = new SqliteKeyStore({ path: ':memory:' });
    const governor = new KeyGovernor({
      limiter: new KeyUsageLimiter({ redis, prefix }),
      recorder: new UsageRecorder({ store }),
      prices: () => ({ 'a-4o': { input_per_million: 1_000_000, output_per_million: 1_000_000 } }),
      recordedSpend: async (keyId, fromDay, toDay) =>
        (await store.usage({ keyId, fromDay, toDay })).reduce((sum, r) => sum + r.costNanoUsd, 0),
    });
    const limited = createPrincipal({
      keyHash: 'gov-1',
      owner: 'o',
      maskedKey: 'm',
      admin: false,
      policy: mergeKeyPolicy({}, { allowed_models: ['a-*'], tokens_per_minute: 10 }),
    });
    expect(() => governor.checkModel(limited, 'b-1')).toThrow(ModelNotAllowedError);
    governor.checkModel(limited, 'a-4o');
    // 'abcd' is one token, plus max_tokens 20: the first call is admitted (0 < 10), the second is not.
    expect(await governor.admit(limited, request('abcd', { max_tokens: 20 }))).toHaveProperty('reservation');
    await expect(governor.admit(limited, request('abcd', { max_tokens: 20 }))).rejects.toBeInstanceOf(
      RateLimitExceededError,
    );

    const budget = mergeKeyPolicy({}, { budget: { amount_usd: 1, period: 'month' } });
    const budgeted = createPrincipal({
      keyHash: 'gov-2',
      owner: 'o',
      maskedKey: 'm',
      admin: false,
      keyId: 'key_gov2',
      policy: budget,
    });
    expect(await governor.admit(budgeted, request('abcd', { max_tokens: 1 }))).toHaveProperty('reservation');
    const err = await governor.admit(budgeted, request('abcd', { max_tokens: 1 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetExceededError);
    expect((err as BudgetExceededError).status).toBe(429);
    expect((err as BudgetExceededError).message).toContain('budget of 1 USD for this month');

    // Redis has no counter for this key (as after a restart that lost its data), but the key store
    // recorded 1 USD spent this month: the budget still holds. Spend of another month does not count.
    const today = new Date().toISOString().slice(0, 10);
    await store.addUsage([
      {
        keyId: 'key_gov3',
        day: today,
        model: 'a-4o',
        requests: 1,
        promptTokens: 1,
        completionTokens: 0,
        costNanoUsd: 1e9,
      },
      {
        keyId: 'key_gov4',
        day: '2001-01-01',
        model: 'a-4o',
        requests: 1,
        promptTokens: 1,
        completionTokens: 0,
        costNanoUsd: 1e9,
      },
    ]);
    const spentBefore = createPrincipal({
      keyHash: 'gov-3',
      owner: 'o',
      maskedKey: 'm',
      admin: false,
      keyId: 'key_gov3',
      policy: budget,
    });
    await expect(governor.admit(spentBefore, request('abcd', { max_tokens: 1 }))).rejects.toBeInstanceOf(
      BudgetExceededError,
    );
    const spentLongAgo = createPrincipal({
      keyHash: 'gov-4',
      owner: 'o',
      maskedKey: 'm',
      admin: false,
      keyId: 'key_gov4',
      policy: budget,
    });
    expect(await governor.admit(spentLongAgo, request('abcd', { max_tokens: 1 }))).toHaveProperty('reservation');
    // The key store down while a counter is missing: 503, not a budget let through.
    await store.close();
    // A file where the database's folder should be: every call fails.
    const notAFolder = join(mkdtempSync(join(tmpdir(), 'gw-governor-')), 'a-file');
    writeFileSync(notAFolder, 'not a folder');
    const unreadable = new SqliteKeyStore({ path: join(notAFolder, 'keys.sqlite') });
    const blind = new KeyGovernor({
      limiter: new KeyUsageLimiter({ redis, prefix }),
      recorder: new UsageRecorder({ store: unreadable }),
      prices: () => ({}),
      recordedSpend: async (keyId) => (await unreadable.usage({ keyId })).length,
    });
    const unknownSpend = createPrincipal({
      keyHash: 'gov-5',
      owner: 'o',
      maskedKey: 'm',
      admin: false,
      keyId: 'key_gov5',
      policy: budget,
    });
    await expect(blind.admit(unknownSpend, request('abcd'))).rejects.toBeInstanceOf(ServiceUnavailableError);
  });

  it('estimates, prices and periods', () => {
    expect(estimatePromptTokens(request('x'.repeat(41)))).toBe(11);
    expect(
      costNanoUsd({ m: { input_per_million: 0.15, output_per_million: 0.6 } }, 'm', { prompt: 7, completion: 3 }),
    ).toBe(2_850);
    expect(costNanoUsd({}, 'unpriced', { prompt: 1_000, completion: 1_000 })).toBe(0);
    expect(budgetPeriod('day', new Date('2026-11-24T23:59:59Z'))).toEqual({
      id: '2026-11-24',
      startDay: '2026-11-24',
      endsAt: new Date('2026-11-25T00:00:00Z'),
    });
    expect(budgetPeriod('month', new Date('2026-12-31T12:00:00Z'))).toEqual({
      id: '2026-12',
      startDay: '2026-12-01',
      endsAt: new Date('2027-01-01T00:00:00Z'),
    });
  });
});
