import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * /docs, /redoc and /dashboard in a real headless browser: Debian's chromium
 * driven by playwright-core (never a downloaded browser). The pages must
 * render from the gateway alone — every request the browser makes is checked
 * to go to the gateway's origin — with a key sent as X-API-Key, or typed
 * into the key prompt by a person.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// CI installs chromium (.ci/run); a developer machine without it skips rather than fails.
const haveBrowser = existsSync(CHROMIUM) || process.env.CI === 'true';

const KEY = 'gw_browser_key_0123456789abcdefghijklmnopqrstuv';
const ADMIN = 'browser-admin-key';
const prefix = uniquePrefix('browser');
const redis = testRedis();
let upstream: FakeUpstream;
let gateway: Gateway;
let browser: Browser;

/** Requests that left for another origin, and console errors (CSP violations show up there). */
interface PageWatch {
  foreign: string[];
  errors: string[];
}

async function openPage(context: BrowserContext, path: string): Promise<{ page: Page; watch: PageWatch }> {
  const page = await context.newPage();
  const watch: PageWatch = { foreign: [], errors: [] };
  const origin = new URL(gateway.baseUrl).origin;
  page.on('request', (req) => {
    const url = req.url();
    if (!url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:')) watch.foreign.push(url);
  });
  page.on('console', (msg) => {
    if (msg.type() === 'error') watch.errors.push(msg.text());
  });
  page.on('pageerror', (err) => watch.errors.push(err.message));
  page.on('response', (res) => {
    if (res.status() >= 400) watch.errors.push(`${res.status()} ${res.url()}`);
  });
  const res = await page.goto(`${gateway.baseUrl}${path}`, { waitUntil: 'load' });
  expect(res?.status()).toBe(200);
  return { page, watch };
}

// A browser on a busy 2-core machine: generous per-test time.
describe.skipIf(!haveBrowser)('docs and dashboard pages in headless Chromium', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    upstream = await startFakeUpstream({ format: 'openai', apiKey: 'sk-browser-upstream' });
    gateway = await startGateway({
      env: {
        REDIS_KEY_PREFIX: prefix,
        API_KEYS: KEY,
        ADMIN_API_KEYS: ADMIN,
        PROVIDER_A_API_KEY: 'sk-browser-upstream',
        SEMANTIC_CACHE_ENABLED: 'false',
        RATE_LIMIT_REQUESTS: '1000',
        PUBLIC_PATHS: '/docs',
      },
      config: {
        providers: [
          { name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: upstream.url, models: ['a-4o'] },
        ],
        prices: { 'a-4o': { input_per_million: 1_000_000, output_per_million: 0 } },
      },
      providers: ['provider_a'],
    });
    // playwright gives every launch a fresh temporary profile (its own --user-data-dir) and deletes it on close.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await upstream?.close();
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  it('renders every operation in Swagger UI at /docs, offline', async () => {
    const context = await browser.newContext({ extraHTTPHeaders: { 'X-API-Key': KEY } });
    try {
      const { page, watch } = await openPage(context, '/docs');
      await page.waitForSelector('.opblock', { timeout: 20_000 });
      const paths = await page.$$eval('.opblock-summary-path', (els) =>
        els.map((e) => e.getAttribute('data-path') ?? e.textContent?.trim() ?? ''),
      );
      for (const path of [
        '/v1/chat/completions',
        '/v1/models',
        '/health',
        '/metrics',
        '/stats',
        '/admin/reload-config',
        '/admin/cache/clear',
        '/openapi.json',
      ]) {
        expect(paths).toContain(path);
      }
      // Swagger UI found nothing to complain about in the document.
      expect(await page.$$('.errors-wrapper')).toHaveLength(0);
      // The security schemes are there: the Authorize button opens both.
      await page.click('.btn.authorize');
      const schemes = await page.$$eval('.auth-container h4', (els) => els.map((e) => e.textContent ?? ''));
      expect(schemes.join(' ')).toContain('ApiKeyHeader');
      expect(schemes.join(' ')).toContain('BearerAuth');
      expect(watch.foreign).toEqual([]);
      expect(watch.errors).toEqual([]);
      await page.screenshot({ path: join(tmpdir(), 'gw-docs.png') });
    } finally {
      await context.close();
    }
  });

  it('renders the operations in ReDoc at /redoc, offline', async () => {
    const context = await browser.newContext({ extraHTTPHeaders: { 'X-API-Key': KEY } });
    try {
      const { page, watch } = await openPage(context, '/redoc');
      await page.waitForSelector('[data-section-id^="operation/"]', { timeout: 20_000 });
      const operations = await page.$$eval('[data-section-id^="operation/"]', (els) =>
        els.map((e) => e.getAttribute('data-section-id')),
      );
      for (const id of [
        'createChatCompletion',
        'listModels',
        'health',
        'metrics',
        'stats',
        'reloadConfig',
        'clearCache',
      ]) {
        expect(operations).toContain(`operation/${id}`);
      }
      expect(await page.textContent('body')).toContain('X-API-Key');
      expect(watch.foreign).toEqual([]);
      expect(watch.errors).toEqual([]);
      await page.screenshot({ path: join(tmpdir(), 'gw-redoc.png') });
    } finally {
      await context.close();
    }
  });

  it('asks a person for the key when the browser sends none (PUBLIC_PATHS=/docs)', async () => {
    const context = await browser.newContext();
    try {
      // /docs and its assets are public here; /openapi.json is not, so the page asks for a key.
      const { page, watch } = await openPage(context, '/docs');
      await page.waitForSelector('#key-prompt-input', { timeout: 20_000 });
      await page.fill('#key-prompt-input', KEY);
      await page.click('#key-prompt button[type="submit"]');
      await page.waitForSelector('.opblock', { timeout: 20_000 });
      // The key typed in is the one Swagger UI's "Try it out" sends.
      await page.click('.btn.authorize');
      expect(await page.textContent('.auth-container')).toContain('Authorized');
      expect(watch.foreign).toEqual([]);
      // The only errors allowed: the 401 of /openapi.json that made the page ask, and the console's report of it.
      expect(watch.errors.filter((e) => !e.includes('401'))).toEqual([]);
      expect(watch.errors).toContain(`401 ${gateway.baseUrl}/openapi.json`);
    } finally {
      await context.close();
    }
  });

  it('draws the dashboard charts from /stats and refreshes them', async () => {
    // Some traffic for the charts.
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body: JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content: 'dashboard traffic' }] }),
      });
      expect(res.status).toBe(200);
    }
    const context = await browser.newContext({ extraHTTPHeaders: { 'X-API-Key': KEY } });
    try {
      const { page, watch } = await openPage(context, '/dashboard?refresh=1');
      // Page functions are serialized into the browser: self-contained, through `globalThis` (tests compile without the DOM library).
      await page.waitForFunction(
        () => Number((globalThis as Untyped).document.body.dataset.refreshes ?? 0) >= 2,
        undefined,
        { timeout: 20_000 },
      );
      const charts: { id: string; labels: unknown[]; width: number; height: number }[] = await page.evaluate(() =>
        Object.values((globalThis as Untyped).Chart.instances).map((c: Untyped) => ({
          id: c.canvas.id,
          labels: c.data.labels,
          width: c.canvas.width,
          height: c.canvas.height,
        })),
      );
      expect(charts.map((c) => c.id).sort()).toEqual(
        [
          'chart-cache',
          'chart-cooldowns',
          'chart-provider-latency',
          'chart-provider-requests',
          'chart-provider-tokens',
          'chart-queue-depth',
          'chart-requests',
        ].sort(),
      );
      for (const chart of charts) {
        expect(chart.width).toBeGreaterThan(0);
        expect(chart.height).toBeGreaterThan(0);
      }
      expect(charts.find((c) => c.id === 'chart-provider-requests')!.labels).toEqual(['provider_a']);
      expect(charts.find((c) => c.id === 'chart-cache')!.labels).toEqual(['exact', 'semantic']);

      const stats = (await (await fetch(`${gateway.baseUrl}/stats`, { headers: { 'x-api-key': KEY } })).json()) as {
        total_requests: number;
        provider_stats: Record<string, { requests: number }>;
      };
      expect(stats.provider_stats.provider_a!.requests).toBeGreaterThanOrEqual(1);
      const shown = Number(await page.textContent('#total-requests'));
      expect(shown).toBeGreaterThanOrEqual(3);
      expect(shown).toBeLessThanOrEqual(stats.total_requests);
      // The provider bar shows what /stats says.
      const bars: number[] = await page.evaluate(
        () =>
          (Object.values((globalThis as Untyped).Chart.instances) as Untyped[]).find(
            (c) => c.canvas.id === 'chart-provider-requests',
          ).data.datasets[0].data,
      );
      expect(bars).toEqual([stats.provider_stats.provider_a!.requests]);

      // Refreshed periodically: the counter keeps going up.
      const before: number = await page.evaluate(() => Number((globalThis as Untyped).document.body.dataset.refreshes));
      await page.waitForFunction((n) => Number((globalThis as Untyped).document.body.dataset.refreshes) > n, before, {
        timeout: 10_000,
      });
      expect(watch.foreign).toEqual([]);
      expect(watch.errors).toEqual([]);
      await page.screenshot({ path: join(tmpdir(), 'gw-dashboard.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });

  it('shows spend per issued key to an admin', async () => {
    const created = await fetch(`${gateway.baseUrl}/admin/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': ADMIN },
      body: JSON.stringify({ owner: 'dash-owner', metadata: { team: 'dash-team' } }),
    }).then((r) => r.json() as Promise<{ key: string; id: string }>);
    const res = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': created.key },
      body: JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content: 'three prompt words' }] }),
    });
    expect(res.status).toBe(200);
    const context = await browser.newContext({ extraHTTPHeaders: { 'X-API-Key': ADMIN } });
    try {
      const { page, watch } = await openPage(context, '/dashboard?refresh=1');
      // Three prompt tokens at 1 USD each, once the usage reached the key store.
      await page.waitForFunction(
        () => ((globalThis as Untyped).document.querySelector('#key-spend')?.textContent ?? '').includes('$3.00'),
        undefined,
        { timeout: 20_000 },
      );
      const row: string[] = await page.evaluate(() =>
        Array.from((globalThis as Untyped).document.querySelectorAll('#key-spend tr td')).map(
          (td: Untyped) => td.textContent,
        ),
      );
      expect(row).toEqual([
        expect.stringMatching(/^gw_/),
        'dash-owner',
        'dash-team',
        '1',
        expect.any(String),
        '$3.00',
        '$3.00',
      ]);
      expect(await page.textContent('#spend-today')).toBe('$3.00');
      // Saved spend of /stats: the gateway's cache, then providers' prompt caches.
      expect(await page.textContent('#spend-saved')).toMatch(/^\$\d+\.\d\d \/ \$-?\d+\.\d\d$/);
      expect(watch.errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
