import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import type { Untyped } from '../support/untyped.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * `POST /v1/responses` in native mode (`responses_api: native`): the
 * gateway forwards the client's Responses body to an OpenAI-format
 * upstream's own `/responses` and passes its reply and events through, with
 * the official `openai` client, through real API and worker processes. The
 * upstream (test/support/fake-upstream/responses-api.ts) is a reasoning
 * model: its reasoning items, encrypted reasoning content and stored
 * responses reach the client, and the body it receives is the client's, but
 * for the model id and what DLP redacted. Keys, usage and DLP still apply.
 */

const KEY = 'gw_e2e_native_responses_key_0123456789';
const ADMIN = 'gw_e2e_native_responses_admin_0123';
const prefix = uniquePrefix('responses-native');
const redis = testRedis();
let gateway: Gateway;
let client: OpenAI;
let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'upstream-a-secret' });
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      ADMIN_API_KEYS: ADMIN,
      KEY_DB_PATH: join(mkdtempSync(join(tmpdir(), 'gw-native-responses-')), 'keys.sqlite'),
      PROVIDER_A_API_KEY: 'upstream-a-secret',
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '100000',
    },
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-o4'],
          upstream_models: { 'a-o4': 'o4-mini' },
          responses_api: 'native',
          timeout_ms: 3000,
          stream_idle_timeout_ms: 2000,
          queue_timeout_ms: 5000,
          max_retries: 1,
        },
      ],
    },
    providers: ['provider_a'],
  });
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

function lastBody(): Record<string, unknown> {
  const request = upstream.requests.at(-1)!;
  expect(request.path).toBe('/v1/responses');
  return request.body as Record<string, unknown>;
}

async function admin(method: string, path: string, body?: unknown): Promise<Untyped> {
  const res = await fetch(`${gateway.baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': ADMIN, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBeLessThan(300);
  return json;
}

describe('native Responses', () => {
  it("forwards the body unchanged but for the model id, and answers the upstream's response: reasoning items with encrypted content", async () => {
    const body = {
      model: 'a-o4',
      instructions: 'Be brief.',
      input: [{ role: 'user' as const, content: [{ type: 'input_text' as const, text: 'why is the sky blue' }] }],
      reasoning: { effort: 'high' as const, summary: 'detailed' as const },
      include: ['reasoning.encrypted_content' as const],
      store: false,
      max_output_tokens: 500,
      prompt_cache_key: 'session-7',
      // A built-in tool: the upstream serves it natively, so the gateway does not refuse it as it would when translating.
      tools: [{ type: 'web_search' as const }],
    };
    const response = await client.responses.create(body);
    expect(lastBody()).toEqual({ ...body, model: 'o4-mini' });
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'a-o4' });
    expect(response.id).toMatch(/^resp_fake\d+$/);
    const reasoning = response.output.find((item) => item.type === 'reasoning');
    expect(reasoning).toMatchObject({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Thinking about: why is the sky blue' }],
    });
    expect(reasoning?.encrypted_content).toMatch(/^gAAAAfake/);
    expect(response.output_text).toBe('Echo: why is the sky blue');
    // The upstream counts the summary's seven words as reasoning tokens.
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBe(7);
  });

  it('streams the upstream events in order, reasoning summary deltas included, and the final response', async () => {
    const stream = client.responses.stream({
      model: 'a-o4',
      input: 'stream the reasoning',
      reasoning: { summary: 'auto' },
    });
    const types: string[] = [];
    const sequence: number[] = [];
    let summary = '';
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
      if (event.type === 'response.reasoning_summary_text.delta') summary += event.delta;
    }
    const final = await stream.finalResponse();
    expect(summary).toBe('Thinking about: stream the reasoning');
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(types).toContain('response.reasoning_summary_part.added');
    expect(sequence).toEqual(sequence.map((_, i) => i));
    expect(final.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(final.output_text).toBe('Echo: stream the reasoning');
    expect(final.model).toBe('a-o4');
    expect(lastBody()).toEqual({
      model: 'o4-mini',
      input: 'stream the reasoning',
      reasoning: { summary: 'auto' },
      stream: true,
    });
  });

  it("continues with the upstream's own previous_response_id, the reasoning item passed back as it came", async () => {
    const first = await client.responses.create({
      model: 'a-o4',
      input: 'first turn',
      include: ['reasoning.encrypted_content'],
    });
    const reasoning = first.output.find((item) => item.type === 'reasoning')!;
    const second = await client.responses.create({
      model: 'a-o4',
      previous_response_id: first.id,
      input: [reasoning, { role: 'user', content: 'second turn' }],
    });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text).toBe('Echo: second turn');
    const sent = lastBody();
    expect(sent.previous_response_id).toBe(first.id);
    expect((sent.input as unknown[])[0]).toEqual(JSON.parse(JSON.stringify(reasoning)));
  });

  it("answers the upstream's 4xx for an id it does not know, in OpenAI's error shape", async () => {
    const err = await client.responses
      .create({ model: 'a-o4', previous_response_id: 'resp_unknown', input: 'hello' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err).toMatchObject({ status: 404, code: 'not_found' });
    expect((err as Error).message).toMatch(/Previous response with id 'resp_unknown' not found/);
  });

  it('redacts personal data in the forwarded texts, and leaves the rest of the body as sent', async () => {
    const body = {
      model: 'a-o4',
      instructions: 'Reply to jane.doe@example.com politely.',
      input: [
        {
          type: 'function_call' as const,
          call_id: 'call_1',
          name: 'lookup',
          arguments: '{"email":"jane.doe@example.com"}',
        },
        { type: 'function_call_output' as const, call_id: 'call_1', output: 'found jane.doe@example.com' },
        { role: 'user' as const, content: 'write to jane.doe@example.com today' },
      ],
      metadata: { ticket: 'T-1' },
    };
    await client.responses.create(body);
    const sent = lastBody();
    expect(JSON.stringify(sent)).not.toContain('jane.doe@example.com');
    expect(sent.metadata).toEqual({ ticket: 'T-1' });
    const input = sent.input as Array<Record<string, unknown>>;
    expect(input.map((item) => item.type ?? item.role)).toEqual(['function_call', 'function_call_output', 'user']);
    expect(input[0]).toMatchObject({ call_id: 'call_1', name: 'lookup' });
    expect(String(input[2]!.content)).toMatch(/^write to .+ today$/);
    expect(String(sent.instructions)).toMatch(/^Reply to .+ politely\.$/);
  });

  it("charges an issued key the upstream's usage, reasoning tokens included", async () => {
    const { key, id } = await admin('POST', '/admin/keys', { owner: 'native-owner' });
    const keyed = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
    const response = await keyed.responses.create({ model: 'a-o4', input: 'count my tokens please' });
    let usage: Untyped;
    await waitFor(
      async () => (usage = await admin('GET', `/admin/keys/${id}/usage`)).total?.requests === 1,
      5_000,
      'usage rows',
    );
    expect(usage.total).toMatchObject({
      requests: 1,
      prompt_tokens: response.usage!.input_tokens,
      completion_tokens: response.usage!.output_tokens,
    });
  });

  it('ends a stream that fails upstream with one error event, numbered in sequence, never a clean end', async () => {
    upstream.setBehavior({ errorEventAt: 5 });
    try {
      const res = await fetch(`${gateway.baseUrl}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'a-o4', input: 'fail midway', stream: true }),
      });
      const events = (await res.text())
        .split('\n\n')
        .filter((frame) => frame.includes('data: '))
        .map(
          (frame) =>
            JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as {
              type: string;
              sequence_number: number;
              code?: string;
            },
        );
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      expect(events.at(-1)).toMatchObject({ type: 'error', code: 'provider_error' });
      expect(events.filter((e) => e.type === 'error')).toHaveLength(1);
      expect(events.some((e) => e.type === 'response.completed')).toBe(false);
    } finally {
      upstream.setBehavior({ errorEventAt: undefined });
    }
  });
});
