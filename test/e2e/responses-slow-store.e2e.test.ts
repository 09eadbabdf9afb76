import OpenAI from 'openai';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { startGatewayWithTrio, type TrioGateway } from '../support/trio-gateway.ts';

/**
 * Stored responses on a slow PostgreSQL: every insert into the response
 * tables waits 300 ms (a trigger), so a reply sent before its row committed
 * would be followed by a 404 for the client's very next request. The
 * gateway holds a reply's last bytes until its response (or, in native mode,
 * the record of the upstream's id) is stored: a client that continues at
 * once, as Codex and the Agents SDK do, finds it. Real API and worker
 * processes, the official `openai` client.
 */

const KEY = 'gw_e2e_slow_store_key_0123456789';
const prefix = uniquePrefix('responses-slow-store');
const redis = testRedis();
const STORE_DELAY_S = 0.3;
let database: TestDatabase | undefined;
let trio: TrioGateway | undefined;
let client: OpenAI;

beforeAll(async () => {
  database = await createTestDatabase('responses_slow_store').catch(() => undefined);
  if (!database) {
    console.warn('\n*** responses-slow-store: PostgreSQL unreachable, SKIPPED ***\n');
    return;
  }
  trio = await startGatewayWithTrio({
    prefix,
    apiKeys: [KEY],
    models: { a: 'a-4o', b: 'b-2.5-flash', c: 'c-sonnet-4' },
    provider: { timeout_ms: 3000, stream_idle_timeout_ms: 2000, queue_timeout_ms: 5000, max_retries: 1 },
    moreProviders: (upstreams) => [
      {
        name: 'provider_n',
        format: 'openai',
        api_key_env: 'PROVIDER_A_API_KEY',
        base_url: upstreams.a.url,
        models: ['n-o4'],
        upstream_models: { 'n-o4': 'o4-mini' },
        responses_api: 'native',
        timeout_ms: 3000,
        max_retries: 1,
      },
    ],
    env: { DATABASE_URL: database.url, KEY_DB_PATH: '' },
  });
  client = new OpenAI({ baseURL: `${trio.gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
  // The API creates its tables on the database's first use; from then on every insert into them is slow.
  await client.responses.create({ model: 'a-4o', input: 'Hello.' });
  const pg = new Client({ connectionString: database.url });
  await pg.connect();
  try {
    await pg.query(
      `CREATE FUNCTION slow_insert() RETURNS trigger AS $$ BEGIN PERFORM pg_sleep(${STORE_DELAY_S}); RETURN NEW; END $$ LANGUAGE plpgsql`,
    );
    for (const table of ['gateway_responses', 'gateway_native_responses'])
      await pg.query(`CREATE TRIGGER slow BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION slow_insert()`);
  } finally {
    await pg.end();
  }
}, 60_000);

afterAll(async () => {
  await trio?.stop();
  await database?.drop();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('a response on a slow database', () => {
  it.each(['a-4o', 'b-2.5-flash', 'c-sonnet-4'])(
    '%s: retrieve and previous_response_id at once after the reply find it',
    async (model) => {
      if (!trio) return;
      const first = await client.responses.create({ model, input: 'My name is Ada.' });
      const [retrieved, next] = await Promise.all([
        client.responses.retrieve(first.id),
        client.responses.create({ model, input: 'What is my name?', previous_response_id: first.id }),
      ]);
      expect(retrieved.id).toBe(first.id);
      expect(retrieved.output_text).toBe(first.output_text);
      expect(next.previous_response_id).toBe(first.id);
    },
  );

  it('a stream: its final response is retrievable as soon as the stream ended', async () => {
    if (!trio) return;
    const stream = client.responses.stream({ model: 'a-4o', input: 'Say something.' });
    const final = await stream.finalResponse();
    const retrieved = await client.responses.retrieve(final.id);
    expect(retrieved.status).toBe('completed');
    expect(retrieved.output_text).toBe(final.output_text);
  });

  it("native mode: the upstream's response id is the key's as soon as the reply ended", async () => {
    if (!trio) return;
    const first = await client.responses.create({ model: 'n-o4', input: 'Remember 42.' });
    const next = await client.responses.create({
      model: 'n-o4',
      input: 'Which number?',
      previous_response_id: first.id,
    });
    expect(next.previous_response_id).toBe(first.id);
    const streamed = await client.responses.stream({ model: 'n-o4', input: 'Again.' }).finalResponse();
    expect((await client.responses.retrieve(streamed.id)).id).toBe(streamed.id);
  });

  it('the reply waited for its row: a stored response takes the insert time, store: false does not', async () => {
    if (!trio) return;
    const timed = async (store: boolean) => {
      const started = performance.now();
      await client.responses.create({ model: 'a-4o', input: `timed ${store}`, store });
      return performance.now() - started;
    };
    expect(await timed(true)).toBeGreaterThanOrEqual(STORE_DELAY_S * 1000 - 20);
    expect(await timed(false)).toBeLessThan(STORE_DELAY_S * 1000);
  });
});
