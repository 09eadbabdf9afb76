import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBatchDb, type SqlDb } from '../../src/batches/sql-db.ts';
import { ResponsesDoor } from '../../src/doors/responses/responses-door.ts';
import { ResponseStore } from '../../src/doors/responses/response-store.ts';
import type { DoorRequest } from '../../src/pipeline/door.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';

/**
 * Stored responses on both real backends (an SQLite file, a database of its
 * own on the test PostgreSQL), written by the door's codec as the pipeline
 * would drive it: ownership, retention, deletion, input items paging, and the
 * turns a `previous_response_id` replays.
 */

let postgres: TestDatabase | undefined;
const dbs: SqlDb[] = [];

beforeAll(async () => {
  postgres = await createTestDatabase('response_store').catch(() => undefined);
  if (!postgres) console.warn('\n*** response-store: PostgreSQL unreachable, its cases are skipped ***\n');
});

afterAll(async () => {
  await Promise.all(dbs.map((db) => db.close()));
  await postgres?.drop();
});

const backends = [
  {
    name: 'sqlite',
    settings: () => ({
      KEY_DB_PATH: join(mkdtempSync(join(tmpdir(), 'gw-response-store-')), 'db.sqlite'),
      DATABASE_URL: undefined,
    }),
  },
  { name: 'postgres', settings: () => (postgres ? { KEY_DB_PATH: '', DATABASE_URL: postgres.url } : undefined) },
];

function completionJson(content: string | null, toolCalls?: unknown[]): string {
  const message = toolCalls ? { role: 'assistant', content, tool_calls: toolCalls } : { role: 'assistant', content };
  return JSON.stringify({
    id: 'c',
    object: 'chat.completion',
    created: 1,
    model: 'a-4o',
    choices: [{ index: 0, message, finish_reason: toolCalls ? 'tool_calls' : 'stop', logprobs: null }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  });
}

describe.each(backends)('on $name', (backend) => {
  let store: ResponseStore;
  let door: ResponsesDoor;
  let clock = Date.parse('2026-01-01T00:00:00Z');
  let settings: ReturnType<(typeof backends)[number]['settings']>;

  beforeAll(() => {
    settings = backend.settings();
    if (!settings) return;
    const db = openBatchDb(settings);
    dbs.push(db);
    store = new ResponseStore({ db, ttlSeconds: 3_600, now: () => clock });
    door = new ResponsesDoor({ store, now: () => clock });
  });

  /** One request through the door as the pipeline runs it: decode, encode the reply, keep it. */
  async function turn(
    owner: string,
    body: Record<string, unknown>,
    reply: string,
  ): Promise<{ id: string; messages: unknown[] }> {
    const from: DoorRequest = { body: { model: 'a-4o', ...body }, headers: {}, owner };
    const request = await door.decode(from);
    const codec = door.reply(request, from);
    const response = JSON.parse(codec.completion(reply)) as { id: string };
    await codec.keep?.();
    return { id: response.id, messages: request.messages };
  }

  it('replays earlier turns, tool calls included, for previous_response_id, without earlier instructions', async (ctx) => {
    if (!settings) return ctx.skip();
    const first = await turn(
      'alice',
      { input: 'weather in Paris?', instructions: 'Use tools.', tools: [{ type: 'function', name: 'weather' }] },
      completionJson(null, [
        { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
      ]),
    );
    const second = await turn(
      'alice',
      {
        input: [{ type: 'function_call_output', call_id: 'call_1', output: '18C' }],
        previous_response_id: first.id,
        tools: [{ type: 'function', name: 'weather' }],
      },
      completionJson('It is 18C.'),
    );
    expect(second.messages).toEqual([
      { role: 'user', content: 'weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18C' },
    ]);
    const third = await turn(
      'alice',
      { input: 'and tomorrow?', previous_response_id: second.id, instructions: 'Answer in French.' },
      completionJson('Demain...'),
    );
    expect(third.messages).toEqual([
      { role: 'system', content: 'Answer in French.' },
      ...second.messages,
      { role: 'assistant', content: 'It is 18C.' },
      { role: 'user', content: 'and tomorrow?' },
    ]);
    expect(await store.get(third.id, 'alice')).toMatchObject({
      id: third.id,
      object: 'response',
      output_text: 'Demain...',
      previous_response_id: second.id,
    });
  });

  it('scopes responses to their owner: another owner reads, deletes and continues them as unknown', async (ctx) => {
    if (!settings) return ctx.skip();
    const { id } = await turn('alice', { input: 'secret plan' }, completionJson('ok'));
    await expect(store.get(id, 'bob')).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(store.delete(id, 'bob')).rejects.toMatchObject({ status: 404 });
    await expect(store.inputItems(id, 'bob', { limit: 20, order: 'desc' })).rejects.toMatchObject({ status: 404 });
    await expect(
      door.decode({ body: { model: 'a-4o', input: 'x', previous_response_id: id }, headers: {}, owner: 'bob' }),
    ).rejects.toMatchObject({ status: 404, message: `Previous response with id '${id}' not found.` });
    expect(await store.get(id, 'alice')).toMatchObject({ id });
  });

  it('deletes a response once, and a deleted link breaks its chain with a 404', async (ctx) => {
    if (!settings) return ctx.skip();
    const first = await turn('alice', { input: 'one' }, completionJson('1'));
    const second = await turn('alice', { input: 'two', previous_response_id: first.id }, completionJson('2'));
    expect(await store.delete(first.id, 'alice')).toEqual({ id: first.id, object: 'response', deleted: true });
    await expect(store.delete(first.id, 'alice')).rejects.toMatchObject({ status: 404 });
    await expect(store.get(first.id, 'alice')).rejects.toMatchObject({ status: 404 });
    await expect(store.conversation(second.id, 'alice')).rejects.toMatchObject({ status: 404 });
  });

  it('stores the input as the pipeline sent it (after DLP), not as the client wrote it', async (ctx) => {
    if (!settings) return ctx.skip();
    const from: DoorRequest = {
      body: { model: 'a-4o', input: 'my card is 4111 1111 1111 1111', instructions: 'Be brief.' },
      headers: {},
      owner: 'alice',
    };
    const request = await door.decode(from);
    const codec = door.reply(request, from);
    const { id } = JSON.parse(codec.completion(completionJson('noted'))) as { id: string };
    const screened = {
      ...request,
      messages: [request.messages[0]!, { role: 'user' as const, content: 'my card is <CREDIT_CARD>' }],
    };
    await codec.keep?.(screened);
    const items = await store.inputItems(id, 'alice', { limit: 20, order: 'asc' });
    expect(items.data).toMatchObject([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'my card is <CREDIT_CARD>' }] },
    ]);
    expect(JSON.stringify(await store.conversation(id, 'alice'))).not.toContain('4111');
  });

  it('refuses a conversation longer than maxChain with a 400, in one query whatever its length', async (ctx) => {
    if (!settings) return ctx.skip();
    const short = new ResponseStore({ db: dbs.at(-1)!, ttlSeconds: 3_600, maxChain: 2, now: () => clock });
    let previous: string | undefined;
    const ids: string[] = [];
    for (const text of ['one', 'two', 'three', 'four']) {
      const { id } = await turn(
        'carol',
        previous ? { input: text, previous_response_id: previous } : { input: text },
        completionJson(text.toUpperCase()),
      );
      ids.push(id);
      previous = id;
    }
    expect(await short.conversation(ids[2]!, 'carol')).toHaveLength(6);
    await expect(short.conversation(ids[3]!, 'carol')).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/longer than 2/),
    });
    expect(await store.conversation(ids[3]!, 'carol')).toHaveLength(8);
  });

  it('keeps nothing with store: false', async (ctx) => {
    if (!settings) return ctx.skip();
    const { id } = await turn('alice', { input: 'forget me', store: false }, completionJson('ok'));
    await expect(store.get(id, 'alice')).rejects.toMatchObject({ status: 404 });
  });

  it('forgets a response after its retention, and removes expired rows on a later write', async (ctx) => {
    if (!settings) return ctx.skip();
    const { id } = await turn('alice', { input: 'short-lived' }, completionJson('ok'));
    clock += 3_601_000;
    await expect(store.get(id, 'alice')).rejects.toMatchObject({ status: 404 });
    await turn('alice', { input: 'later' }, completionJson('ok'));
    const db = dbs.at(-1)!;
    const rows = await db.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM gateway_responses WHERE id = ?', [id]);
    expect(Number(rows[0]!.n)).toBe(0);
  });

  it("keeps a native upstream's response ids per owner, for the retention, and forgets them", async (ctx) => {
    if (!settings) return ctx.skip();
    const createdAt = Math.floor(clock / 1000);
    await store.saveNative({ id: 'resp_native_1', owner: 'alice', provider: 'provider_a', model: 'a-o4', createdAt });
    expect(await store.native('resp_native_1', 'alice')).toEqual({ provider: 'provider_a', model: 'a-o4' });
    expect(await store.native('resp_native_1', 'bob')).toBeUndefined();
    await store.forgetNative('resp_native_1', 'bob');
    expect(await store.native('resp_native_1', 'alice')).toBeDefined();
    await store.forgetNative('resp_native_1', 'alice');
    expect(await store.native('resp_native_1', 'alice')).toBeUndefined();
    await store.saveNative({ id: 'resp_native_2', owner: 'alice', provider: 'provider_a', model: 'a-o4', createdAt });
    clock += 3_601_000;
    expect(await store.native('resp_native_2', 'alice')).toBeUndefined();
  });

  it('lists input items as OpenAI list pages, newest first by default', async (ctx) => {
    if (!settings) return ctx.skip();
    const input = [
      { role: 'developer', content: 'be terse' },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'look' },
          { type: 'input_image', image_url: 'https://example.com/a.png' },
        ],
      },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'done' },
    ];
    const { id } = await turn('alice', { input, tools: [{ type: 'function', name: 'f' }] }, completionJson('ok'));
    const all = await store.inputItems(id, 'alice', { limit: 20, order: 'asc' });
    expect(all.data).toMatchObject([
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'be terse' }] },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'look' },
          { type: 'input_image', image_url: 'https://example.com/a.png' },
        ],
      },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'done' },
    ]);
    expect(all).toMatchObject({ object: 'list', has_more: false, first_id: all.data[0]!.id, last_id: all.data[3]!.id });
    const page1 = await store.inputItems(id, 'alice', { limit: 3, order: 'desc' });
    expect(page1.data.map((i) => i.id)).toEqual(
      all.data
        .map((i) => i.id)
        .reverse()
        .slice(0, 3),
    );
    expect(page1.has_more).toBe(true);
    const page2 = await store.inputItems(id, 'alice', { limit: 3, order: 'desc', after: page1.last_id! });
    expect(page2.data.map((i) => i.id)).toEqual([all.data[0]!.id]);
    expect(page2.has_more).toBe(false);
    await expect(store.inputItems(id, 'alice', { limit: 3, order: 'desc', after: 'msg_nope' })).rejects.toMatchObject({
      status: 400,
    });
  });
});
