import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { FakeUpstream, ProviderLetter } from '../support/fake-upstream.ts';
import type { Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { startGatewayWithTrio, type TrioGateway } from '../support/trio-gateway.ts';

/**
 * The OpenAI Agents SDK (`@openai/agents`) with its default model class,
 * which speaks the Responses API, running an agent with one function tool
 * through the real gateway processes to loopback upstreams of each format:
 * the model asks for the tool, the SDK runs it and sends its output back,
 * the model answers with it.
 */

const KEY = 'gw_e2e_agents_key_0123456789';
const prefix = uniquePrefix('agents');
const redis = testRedis();
let gateway: Gateway;
let upstreams: Record<ProviderLetter, FakeUpstream>;
let trio: TrioGateway | undefined;

const MODELS = { a: 'a-4o', b: 'b-2.5-flash', c: 'c-sonnet-4' } as const;

beforeAll(async () => {
  trio = await startGatewayWithTrio({
    prefix,
    apiKeys: [KEY],
    models: MODELS,
    provider: { timeout_ms: 3000, stream_idle_timeout_ms: 2000, queue_timeout_ms: 5000, max_retries: 1 },
  });
  ({ gateway, upstreams } = trio);
  // The SDK's defaults: the Responses API, through this client; no trace export (it would call OpenAI).
  setDefaultOpenAIClient(new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 }));
  setOpenAIAPI('responses');
  setTracingDisabled(true);
}, 60_000);

afterAll(async () => {
  await trio?.stop();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe.each(Object.entries(MODELS) as Array<[ProviderLetter, string]>)('provider_%s', (letter, model) => {
  it.each([false, true])('runs an agent with one function tool (streamed: %s)', async (stream) => {
    const calls: string[] = [];
    const weather = tool({
      name: 'get_weather',
      description: 'The weather in a city.',
      parameters: z.object({ input: z.string() }),
      execute: async ({ input }) => {
        calls.push(input);
        return 'sunny, 21 C';
      },
    });
    const agent = new Agent({ name: 'Forecaster', instructions: 'Use the tool to answer.', model, tools: [weather] });
    const question = `weather in Lyon ${Math.random().toString(36).slice(2, 8)}`;
    const before = upstreams[letter].requests.length;
    let finalOutput: unknown;
    if (stream) {
      const result = await run(agent, question, { stream: true });
      await result.completed;
      finalOutput = result.finalOutput;
    } else {
      finalOutput = (await run(agent, question)).finalOutput;
    }
    expect(calls).toEqual([question]);
    expect(finalOutput).toBe('Tool said: sunny, 21 C');
    // Two model calls reached the upstream: the tool request, then the answer.
    expect(upstreams[letter].requests.length - before).toBe(2);
  });
});
