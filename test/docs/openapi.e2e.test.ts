import { spawnSync } from 'node:child_process';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chatCompletionRequestSchema } from '../../src/chat/request-schema.ts';
import { createApiRoot, type ApiRoot } from '../../src/composition/api-root.ts';
import { loadSettings } from '../../src/config/settings.ts';
import { buildOpenApiDocument } from '../../src/http/api-docs/openapi.ts';
import { serviceVersion } from '../../src/health/service-version.ts';
import { clearBodySchema } from '../../src/http/routes/admin-cache.ts';
import { startGateway, writeConfig, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * The OpenAPI 3.1 document: generated from the zod schemas that validate
 * requests, complete (every route the app serves, every endpoint of the
 * spec), internally consistent, and served with the docs pages by a running
 * gateway.
 */

type Json = Record<string, Untyped>;
const KEY = 'gw_openapi_key_0123456789abcdefghijklmnopqrstu';
const doc = buildOpenApiDocument({ version: '9.9.9' }) as Json;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function operations(document: Json): { method: string; path: string; op: Json }[] {
  const out: { method: string; path: string; op: Json }[] = [];
  for (const [path, item] of Object.entries(document.paths as Json)) {
    for (const method of METHODS) if (item[method]) out.push({ method, path, op: item[method] });
  }
  return out;
}

describe('the document', () => {
  it('is OpenAPI 3.1 with the X-API-Key and Bearer security schemes applied to every operation', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('9.9.9');
    expect(doc.components.securitySchemes).toEqual({
      ApiKeyHeader: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
      BearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(doc.security).toEqual([{ ApiKeyHeader: [] }, { BearerAuth: [] }]);
  });

  it('describes the chat request with the very zod schema that validates it', () => {
    const generated = z.toJSONSchema(chatCompletionRequestSchema, {
      target: 'draft-2020-12',
      io: 'input',
      unrepresentable: 'any',
    }) as Json;
    const direct = generated.$defs?.ChatCompletionRequest ?? generated;
    const { $schema: _s, ...expected } = direct;
    expect(doc.components.schemas.ChatCompletionRequest).toEqual(expected);
    // The documented bounds, as validation enforces them.
    const props = doc.components.schemas.ChatCompletionRequest.properties;
    expect(props.messages).toMatchObject({ minItems: 1, maxItems: 1000 });
    expect(props.temperature.anyOf[0]).toMatchObject({ minimum: 0, maximum: 2 });
    expect(props.n.anyOf[0]).toMatchObject({ minimum: 1, maximum: 8 });
    expect(doc.components.schemas.ChatCompletionRequest.additionalProperties).toBe(false);
    expect(doc.paths['/v1/chat/completions'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ChatCompletionRequest',
    });
  });

  it('describes the cache-clear body with the schema the admin route validates with', () => {
    const generated = z.toJSONSchema(clearBodySchema, { target: 'draft-2020-12', io: 'input' }) as Json;
    const { $schema: _s, ...expected } = generated;
    expect(doc.components.schemas.CacheClearRequest).toEqual(expected);
  });

  it('has every documented endpoint, with every field of the statistics record', () => {
    const have = new Set(operations(doc).map((o) => `${o.method.toUpperCase()} ${o.path}`));
    for (const endpoint of [
      'POST /v1/chat/completions',
      'POST /v1/files',
      'GET /v1/files',
      'GET /v1/files/{id}',
      'DELETE /v1/files/{id}',
      'GET /v1/files/{id}/content',
      'POST /v1/batches',
      'GET /v1/batches',
      'GET /v1/batches/{id}',
      'POST /v1/batches/{id}/cancel',
      'GET /health',
      'GET /health/ready',
      'GET /health/live',
      'GET /metrics',
      'GET /stats',
      'POST /admin/reload-config',
      'GET /admin/cache/stats',
      'POST /admin/cache/clear',
      'GET /docs',
      'GET /redoc',
      'GET /openapi.json',
      'GET /dashboard',
    ]) {
      expect(have).toContain(endpoint);
    }
    const stats = doc.components.schemas.StatsRecord;
    expect(stats.required).toEqual(['total_requests', 'cache_stats', 'provider_stats', 'rate_limit_stats']);
    expect(doc.components.schemas.CacheLookupStats.required).toEqual(['hits', 'misses', 'hit_rate']);
    expect(doc.components.schemas.ProviderStats.required).toEqual(['requests', 'tokens', 'avg_latency']);
    expect(doc.components.schemas.TopUser.required).toEqual(['api_key', 'requests']);
  });

  it('has unique operation ids, an error envelope for failures, and only references that resolve', () => {
    const ids = operations(doc).map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { op } of operations(doc)) {
      expect(op.responses['401']).toEqual({ $ref: '#/components/responses/Error401' });
    }
    const refs: string[] = [];
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (k === '$ref' && typeof v === 'string') refs.push(v);
          else walk(v);
        }
      }
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(20);
    for (const ref of refs) {
      const target = ref
        .replace(/^#\//, '')
        .split('/')
        .reduce<Untyped>((node, part) => node?.[part], doc);
      expect(target, ref).toBeDefined();
    }
    expect(JSON.stringify(doc)).not.toContain('__shared');
  });

  it("has only patterns that other languages' regex engines read too (no \\p{...} property escapes): Python compiles every one", () => {
    const patterns = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === 'pattern' && typeof value === 'string') patterns.add(value);
          else walk(value);
        }
      }
    };
    walk(doc);
    expect(patterns.size).toBeGreaterThan(0);
    for (const pattern of patterns) expect(pattern).not.toMatch(/\\[pP]\{/);
    const python = spawnSync(
      'python3',
      ['-c', 'import json, re, sys\nfor p in json.load(sys.stdin): re.compile(p)\nprint("ok")'],
      { input: JSON.stringify([...patterns]), encoding: 'utf8' },
    );
    if (python.error) return; // no python3 on this machine: the escape check above still ran
    expect(python.stderr).toBe('');
    expect(python.stdout.trim()).toBe('ok');
  });

  it('validates against the schema of the OpenAPI version it declares', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    // The validator does catch a keyword of a later version (OpenAPI 3.2's itemSchema) in this 3.1 document.
    const later = structuredClone(doc);
    later.paths['/v1/chat/completions'].post.responses['200'].content['text/event-stream'].itemSchema = {
      type: 'object',
    };
    expect((await new Validator().validate(later)).valid).toBe(false);
  });
});

describe('the app against the document', () => {
  const prefix = uniquePrefix('openapi-app');
  let root: ApiRoot;

  beforeAll(async () => {
    const settings = loadSettings({
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      SEMANTIC_CACHE_ENABLED: 'false',
      CONFIG_PATH: writeConfig({
        providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', models: ['a-4o'] }],
      }),
      LOG_LEVEL: 'error',
    });
    root = await createApiRoot(settings);
  });

  afterAll(async () => {
    await root?.close();
    const redis = testRedis();
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  it('documents every route the API serves (assets aside)', () => {
    const served = new Set<string>();
    const walk = (stack: Untyped[]) => {
      for (const layer of stack) {
        if (layer.route) {
          for (const method of Object.keys(layer.route.methods)) {
            const path = String(layer.route.path).replace(/:(\w+)/g, '{$1}');
            if (!path.includes('/assets/')) served.add(`${method.toUpperCase()} ${path}`);
          }
        } else if (layer.handle?.stack) {
          walk(layer.handle.stack);
        }
      }
    };
    walk((root.http.app as Untyped).router.stack);
    const documented = new Set(
      operations(buildOpenApiDocument({ version: serviceVersion() }) as Json).map(
        (o) => `${o.method.toUpperCase()} ${o.path}`,
      ),
    );
    expect(served.size).toBeGreaterThan(10);
    expect([...served].filter((r) => !documented.has(r))).toEqual([]);
    expect([...documented].filter((r) => !served.has(r))).toEqual([]);
  });
});

describe('served by a running gateway', () => {
  const prefix = uniquePrefix('openapi');
  let gateway: Gateway;

  beforeAll(async () => {
    gateway = await startGateway({
      env: {
        REDIS_KEY_PREFIX: prefix,
        API_KEYS: KEY,
        PROVIDER_A_API_KEY: 'sk-openapi-up',
        SEMANTIC_CACHE_ENABLED: 'false',
        PUBLIC_PATHS: '/docs',
      },
      config: { providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', models: ['a-4o'] }] },
      providers: [],
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    const redis = testRedis();
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  const get = (path: string, key: string | null = KEY, init: RequestInit = {}) =>
    fetch(`${gateway.baseUrl}${path}`, { ...init, headers: key ? { 'x-api-key': key } : {} });

  it('serves /openapi.json: the generated document, behind the key', async () => {
    const res = await get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument({ version: serviceVersion() }))));
    const denied = await get('/openapi.json', null);
    expect(denied.status).toBe(401);
    expect(((await denied.json()) as Json).error.code).toBe('invalid_api_key');
    // Also with the key as a bearer token, as the security schemes say.
    expect(
      (await fetch(`${gateway.baseUrl}/openapi.json`, { headers: { authorization: `Bearer ${KEY}` } })).status,
    ).toBe(200);
  });

  it('serves the pages with a strict CSP and every asset from the gateway itself', async () => {
    for (const [page, assets] of [
      [
        '/docs',
        [
          'docs/assets/swagger-ui-bundle.js',
          'docs/assets/swagger-ui.css',
          'docs/assets/swagger-init.js',
          'docs/assets/key-prompt.js',
        ],
      ],
      ['/redoc', ['redoc/assets/redoc.standalone.js', 'redoc/assets/redoc-init.js']],
      [
        '/dashboard',
        ['dashboard/assets/chart.umd.min.js', 'dashboard/assets/dashboard.js', 'dashboard/assets/dashboard.css'],
      ],
    ] as const) {
      const res = await get(page);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      const html = await res.text();
      expect(html).not.toMatch(/https?:\/\//);
      for (const asset of assets) {
        expect(html).toContain(asset);
        const file = await get(`/${asset}`);
        expect(file.status, asset).toBe(200);
        expect(file.headers.get('content-type')).toMatch(asset.endsWith('.css') ? /text\/css/ : /javascript/);
        expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(100);
      }
    }
  });

  it('keeps ReDoc from calling its CDN', async () => {
    const bundle = await (await get('/redoc/assets/redoc.standalone.js')).text();
    expect(bundle).not.toContain('cdn.redoc.ly');
    expect(bundle).toContain('Redoc');
  });

  it('opens /docs and its assets with PUBLIC_PATHS=/docs, and nothing more', async () => {
    expect((await get('/docs', null)).status).toBe(200);
    expect((await get('/docs/assets/swagger-ui-bundle.js', null)).status).toBe(200);
    for (const path of [
      '/openapi.json',
      '/redoc',
      '/redoc/assets/redoc.standalone.js',
      '/dashboard',
      '/dashboard/assets/dashboard.js',
      '/stats',
    ]) {
      expect((await get(path, null)).status, path).toBe(401);
    }
  });

  it('never serves files outside the asset list', async () => {
    for (const path of [
      '/docs/assets/package.json',
      '/docs/assets/..%2F..%2Fpackage.json',
      '/docs/assets/index.html',
      '/redoc/assets/redoc.lib.js',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as Json).error.code).toBe('not_found');
    }
  });

  it('redirects /docs/ to /docs so relative asset URLs resolve', async () => {
    const res = await get('/docs/', KEY, { redirect: 'manual' });
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe('../docs');
  });
});
