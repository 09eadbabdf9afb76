import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream, type ProviderLetter } from '../support/fake-upstream.ts';
import type { Untyped } from '../support/untyped.ts';
import type { Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { startGatewayWithTrio, type TrioGateway } from '../support/trio-gateway.ts';

/**
 * The Codex CLI itself (npm `@openai/codex`, which accepts only the
 * Responses API) running `codex exec` headless against the gateway as a
 * custom model provider, read-only sandbox, no approvals, for a model of each
 * provider: exit 0 and the upstream's answer in its output. The loopback
 * upstream first calls Codex's first tool (`exec_command`) with arguments
 * Codex refuses, then answers with the tool output it got back: so the
 * answer also proves a function-call round trip through Codex. And a model
 * on a provider configured `responses_api: native`, whose loopback upstream
 * serves `/responses` itself: Codex's own body (reasoning, `include`,
 * `store: false`, its tools) reaches it, and its answer reaches Codex. `.ci/run`
 * installs the CLI into `.tools/codex`; `CODEX_BIN` names another binary.
 * Without one the file says SKIPPED and runs nothing.
 */

const CODEX_BIN =
  process.env.CODEX_BIN ?? resolve(import.meta.dirname, '../../.tools/codex/node_modules/@openai/codex/bin/codex.js');
const available = existsSync(CODEX_BIN);
if (!available)
  console.warn(`\n*** codex-cli: SKIPPED, no Codex CLI at ${CODEX_BIN} (.ci/run installs it; or set CODEX_BIN) ***\n`);

const KEY = 'gw_e2e_codex_key_0123456789';
const prefix = uniquePrefix('codex');
const redis = testRedis();
let gateway: Gateway | undefined;
let upstreams: Record<ProviderLetter, FakeUpstream> | undefined;
let trio: TrioGateway | undefined;
/** The upstream of the native provider: OpenAI's Responses API (test/support/fake-upstream/responses-api.ts). */
let native: FakeUpstream | undefined;

const MODELS = { a: 'a-4o', b: 'b-2.5-flash', c: 'c-sonnet-4' } as const;
const NATIVE_MODEL = 'n-codex';

beforeAll(async () => {
  if (!available) return;
  native = await startFakeUpstream({ format: 'openai', apiKey: 'upstream-native-secret' });
  const fast = {
    timeout_ms: 5000,
    stream_idle_timeout_ms: 5000,
    queue_timeout_ms: 5000,
    max_retries: 1,
    drop_unsupported_params: true,
  };
  trio = await startGatewayWithTrio({
    prefix,
    apiKeys: [KEY],
    models: MODELS,
    provider: fast,
    env: { PROVIDER_N_API_KEY: 'upstream-native-secret' },
    moreProviders: [
      {
        name: 'provider_n',
        api_key_env: 'PROVIDER_N_API_KEY',
        format: 'openai',
        base_url: native.url,
        models: [NATIVE_MODEL],
        upstream_models: { [NATIVE_MODEL]: 'gpt-5-codex' },
        responses_api: 'native',
        ...fast,
      },
    ],
  });
  ({ gateway, upstreams } = trio);
}, 60_000);

afterAll(async () => {
  await trio?.stop();
  await native?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

/** `codex exec` with the gateway as its model provider, in a fresh CODEX_HOME and working folder, never touching the network beyond loopback. */
function codexExec(model: string, prompt: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const home = mkdtempSync(join(tmpdir(), 'gw-codex-home-'));
  const work = mkdtempSync(join(tmpdir(), 'gw-codex-work-'));
  const provider = `{ name = "gateway", base_url = "${gateway!.baseUrl}/v1", env_key = "GATEWAY_API_KEY", wire_api = "responses" }`;
  const args = [
    CODEX_BIN,
    'exec',
    '--skip-git-repo-check',
    '--sandbox',
    'read-only',
    '-c',
    'approval_policy="never"',
    // Hosted web search and tool namespaces are not served by the gateway (docs/responses.md#codex-cli).
    '-c',
    'web_search="disabled"',
    '--disable',
    'multi_agent',
    '--disable',
    'goals',
    '-c',
    `model_providers.gateway=${provider}`,
    '-c',
    'model_provider="gateway"',
    '-m',
    model,
    '-C',
    work,
    prompt,
  ];
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, {
      env: { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, GATEWAY_API_KEY: KEY, RUST_LOG: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

describe.skipIf(!available).each(Object.entries(MODELS) as Array<[ProviderLetter, string]>)(
  'provider_%s',
  (letter, model) => {
    it('codex exec answers through the gateway, after a tool round trip, and exits 0', async () => {
      const before = upstreams![letter].requests.length;
      const { code, stdout, stderr } = await codexExec(model, 'Say hello.');
      expect(code, `stdout:\n${stdout}\nstderr:\n${stderr}`).toBe(0);
      // The last message, on stdout: the upstream's answer, quoting what Codex sent back for its tool call.
      expect(stdout).toMatch(/^Tool said: .*missing field `cmd`/m);
      const sent = upstreams![letter].requests.slice(before);
      expect(sent).toHaveLength(2);
      expect(JSON.stringify(sent[1]!.body)).toContain('missing field');
    }, 120_000);
  },
);

describe.skipIf(!available)('a provider with responses_api: native', () => {
  it("codex exec gets the upstream's own Responses answer, its body forwarded as Codex sent it, and exits 0", async () => {
    const before = native!.requests.length;
    const { code, stdout, stderr } = await codexExec(NATIVE_MODEL, 'Say hello natively.');
    expect(code, `stdout:\n${stdout}\nstderr:\n${stderr}`).toBe(0);
    expect(stdout).toMatch(/^Echo: Say hello natively\./m);
    const sent = native!.requests.slice(before).filter((r) => r.path === '/v1/responses');
    expect(sent).toHaveLength(1);
    const body = sent[0]!.body as Untyped;
    // Codex's own Responses body, under the upstream's model id: nothing was translated or dropped.
    expect(body).toMatchObject({ model: 'gpt-5-codex', stream: true, store: false });
    expect(body.include).toContain('reasoning.encrypted_content');
    expect(body.reasoning).toBeTypeOf('object');
    expect(typeof body.prompt_cache_key).toBe('string');
    expect(body.tools.map((t: Untyped) => t.type)).toContain('function');
    expect(JSON.stringify(body.input)).toContain('Say hello natively.');
  }, 120_000);
});
