import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream, ProviderLetter } from '../support/fake-upstream.ts';
import type { Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { startGatewayWithTrio, type TrioGateway } from '../support/trio-gateway.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * Claude Code itself through the Messages door: `claude -p` (headless, file
 * and shell tools denied) against a real gateway whose three providers are
 * loopback upstreams of the three wire formats. Claude Code is not a
 * dependency of the project: `.ci/run` installs it outside the checkout and
 * names its binary in CLAUDE_CODE_BIN; without it this file says SKIPPED.
 */

const BIN = process.env.CLAUDE_CODE_BIN ?? '';
const available = BIN !== '' && existsSync(BIN);
if (!available) {
  console.warn(
    '\n*** SKIPPED test/e2e/claude-code.e2e.test.ts: set CLAUDE_CODE_BIN to a Claude Code binary (.ci/run installs one) ***\n',
  );
}

const KEY = 'claude-code-door-key';
const prefix = uniquePrefix('claude-code');
const redis = testRedis();
let upstreams: Record<ProviderLetter, FakeUpstream>;
let trio: TrioGateway | undefined;
let gateway: Gateway;

const MODELS: Record<ProviderLetter, string> = { a: 'a-4o', b: 'b-2.5-flash', c: 'c-sonnet-4-20250514' };

/**
 * Claude Code keeps its default tool set, so each upstream is sent every
 * declaration, and none of the tools that read or write files or run
 * commands may run in CI: `dontAsk` denies whatever would ask for
 * permission (shell, writes, web), and deny rules on every absolute path
 * (`//**`) deny the file tools. (A rule naming a whole tool, as `--disallowedTools` does,
 * would take it out of the set instead.)
 */
const PERMISSIONS = [
  '--permission-mode',
  'dontAsk',
  '--settings',
  JSON.stringify({
    permissions: {
      deny: [
        'Read(//**)',
        'Edit(//**)',
        'Write(//**)',
        'Glob(//**)',
        'Grep(//**)',
        'NotebookEdit(//**)',
        'WebFetch(domain:*)',
      ],
    },
  }),
];

/** The tool names of a model call, in any of the three formats. */
function declaredTools(body: Untyped): string[] {
  const tools: Untyped[] = body?.tools ?? [];
  return tools.flatMap((t) => t.functionDeclarations?.map((d: Untyped) => d.name) ?? [t.name ?? t.function?.name]);
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runClaude(model: string, prompt: string, toolArgs: readonly string[]): Promise<Run> {
  const home = mkdtempSync(join(tmpdir(), 'gw-claude-home-'));
  const child = spawn(BIN, ['-p', prompt, '--model', model, ...toolArgs, '--output-format', 'text'], {
    cwd: home,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      ANTHROPIC_BASE_URL: gateway.baseUrl,
      ANTHROPIC_AUTH_TOKEN: KEY,
      // Background calls (titles, summaries) go to a model of the same provider.
      ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
      ANTHROPIC_SMALL_FAST_MODEL: model,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_AUTOUPDATER: '1',
      CI: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  if (!available) return;
  trio = await startGatewayWithTrio({
    prefix,
    apiKeys: [KEY],
    models: MODELS,
    env: { DLP_ENABLED: 'false', RATE_LIMIT_REQUESTS: '1000', CACHE_ENABLED: 'false' },
  });
  ({ gateway, upstreams } = trio);
}, 90_000);

afterAll(async () => {
  if (!available) return;
  await trio?.stop();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

/**
 * The fake upstream calls the first tool Claude Code declares (see
 * `fakeAnswer`); Claude Code runs it (or refuses it) and sends the result
 * back, and the upstream's second answer, `Tool said: ...`, is what Claude
 * Code prints: a whole agent turn, tool round trip included, through the door.
 */
describe.skipIf(!available).each(['a', 'b', 'c'] as ProviderLetter[])(
  'Claude Code with its default tools through the Messages door to provider_%s',
  (letter) => {
    it('exits 0 after a tool round trip and prints the upstream answer', async () => {
      const before = upstreams[letter].requests.length;
      const run = await runClaude(MODELS[letter], `say the word pelican${letter}`, PERMISSIONS);
      expect(run.code, `stdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0);
      expect(run.stdout).toMatch(/^Tool said: /);
      const calls = upstreams[letter].requests.slice(before).filter((r) => r.method === 'POST');
      const bodies = calls.map((r) => JSON.stringify(r.body));
      // The prompt reached the upstream with the default tool set declared, and so did the tool result Claude Code sent back.
      expect(bodies.some((body) => body.includes(`say the word pelican${letter}`))).toBe(true);
      expect(declaredTools(calls[0]?.body)).toEqual(expect.arrayContaining(['Bash', 'Read', 'Edit', 'Write']));
      expect(bodies.some((body) => body.includes('tool_use_error'))).toBe(true);
      if (letter === 'c') {
        // Lossless to an Anthropic-format upstream: Claude Code's betas and context editing arrive as it sent them.
        expect(calls[0]?.headers['anthropic-beta']).toContain('claude-code-');
        expect(calls[0]?.body).toHaveProperty('context_management');
      }
      if (letter === 'b') {
        // The string limits of Claude Code's tools reach Gemini as Gemini's own keywords.
        expect(bodies[0]).toContain('"maxLength":');
      }
    }, 120_000);
  },
);
