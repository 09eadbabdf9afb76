import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `bin/gateway.js` (the package's `gateway` command) as a real process. */
export function runGatewayCli(args: readonly string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', resolve(ROOT, 'bin/gateway.js'), ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warning', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

/** `gateway keys create --owner <owner> [--admin] --json`, parsed. */
export async function createKeyWithCli(
  env: Record<string, string>,
  owner: string,
  admin = false,
): Promise<{ key: string; id: string; owner: string; admin: boolean; created_at: string }> {
  const run = await runGatewayCli(['keys', 'create', '--owner', owner, ...(admin ? ['--admin'] : []), '--json'], env);
  if (run.code !== 0) throw new Error(`gateway keys create failed (${run.code}): ${run.stderr}`);
  return JSON.parse(run.stdout) as { key: string; id: string; owner: string; admin: boolean; created_at: string };
}
