import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, spawnGatewayProcess, waitFor, writeConfig, type GatewayProcess } from '../support/processes.ts';

/** With Redis unreachable, chat requests fail fast with 503 instead of hanging. */

const KEY = 'gw_redis_down_key_0123456789';
let api: GatewayProcess;
let baseUrl: string;

beforeAll(async () => {
  const deadRedisPort = await freePort();
  const port = await freePort();
  const configPath = writeConfig({
    providers: [
      { name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: 'http://127.0.0.1:9/v1', models: ['a-4o'] },
    ],
  });
  api = spawnGatewayProcess('src/server.ts', [], {
    CONFIG_PATH: configPath,
    PORT: String(port),
    HOST: '127.0.0.1',
    REDIS_PORT: String(deadRedisPort),
    API_KEYS: KEY,
    PROVIDER_A_API_KEY: 'x',
    DLP_ENABLED: 'false',
    SEMANTIC_CACHE_ENABLED: 'false',
    LOG_LEVEL: 'error',
  });
  baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => (await fetch(`${baseUrl}/v1/models`, { headers: { 'x-api-key': KEY } })).status > 0,
    20_000,
    'API start',
  );
}, 30_000);

afterAll(async () => {
  await api?.kill();
});

describe('Redis unreachable', () => {
  it('answers chat completions with 503 service_unavailable within seconds', async () => {
    for (const stream of [false, true]) {
      const started = Date.now();
      const res = await fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body: JSON.stringify({ model: 'a-4o', stream, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { error: { code: string; type: string; message: string } };
      expect(body.error.code).toBe('service_unavailable');
      expect(body.error.type).toBe('api_error');
      expect(body.error.message).toMatch(/Redis/i);
    }
  });
});
