import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { rssMiB } from './stack.ts';

/**
 * A server the peer benchmark starts as its users would (a script, a CLI), in
 * a process group of its own, with its output in a log file rather than a
 * pipe: at thousands of requests a second an access log read by the bench
 * would cost the load generator's core, and held in memory, grow without end.
 */
export interface ServiceOptions {
  /** For messages. */
  name: string;
  command: string;
  args: readonly string[];
  cwd: string;
  /** The whole environment: nothing of the bench's own is passed on unless named here. */
  env: Record<string, string>;
  /** Receives its stdout and stderr. */
  logPath: string;
  /**
   * Core it runs on (`taskset -c`); every process it starts inherits it.
   * @defaultValue undefined: wherever the kernel puts it
   */
  core?: number;
}

export interface Service {
  name: string;
  /** Its first process (and the id of its process group). */
  pid: number;
  logPath: string;
  /** What it wrote so far. */
  log(): string;
  /** Exit code or signal once it has exited; undefined while it runs. */
  exit(): string | undefined;
  /** Its process and every descendant, by cmdline. */
  tree(): Map<number, string>;
  /** Resident memory of its whole tree, MiB. */
  rss(): Promise<number>;
  /** SIGTERM to its group, SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export function startService(options: ServiceOptions): Service {
  const out = openSync(options.logPath, 'a');
  const [command, args] =
    options.core === undefined
      ? [options.command, options.args]
      : ['taskset', ['-c', String(options.core), options.command, ...options.args]];
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', out, out],
    detached: true,
  });
  closeSync(out);
  let exit: string | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = signal ?? `exit ${code}`;
      resolve();
    }),
  );
  child.once('error', (err) => (exit = `failed to start: ${err.message}`));
  const pid = child.pid ?? 0;
  return {
    name: options.name,
    pid,
    logPath: options.logPath,
    log: () => {
      try {
        return readFileSync(options.logPath, 'utf8');
      } catch {
        return '';
      }
    },
    exit: () => exit,
    tree: () => processTree(pid),
    async rss() {
      let total = 0;
      for (const p of processTree(pid).keys()) total += (await rssMiB(p)) || 0;
      return total;
    },
    async stop(graceMs = 10_000) {
      if (exit !== undefined || !pid) return;
      const signal = (name: NodeJS.Signals) => {
        try {
          process.kill(-pid, name);
        } catch {
          // the group is gone already
        }
      };
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      // A child that outlived its parent (a worker still closing) goes with the group.
      signal('SIGKILL');
    },
  };
}

/** `root` and its descendants, each with its command line, from Linux /proc. */
export function processTree(root: number): Map<number, string> {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The parent's id is the second field after the parenthesised command name.
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited meanwhile
    }
  }
  const tree = new Map<number, string>();
  const visit = (pid: number) => {
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      return;
    }
    tree.set(pid, cmdline);
    for (const [child, parent] of parentOf) if (parent === pid) visit(child);
  };
  visit(root);
  return tree;
}

/** Polls `check` every 100 ms until it is true; false once `timeoutMs` passed or `gone()` says the process ended. */
export async function until(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  gone: () => boolean = () => false,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await check()) return true;
    } catch {
      // not yet
    }
    if (gone()) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** True when `url` answers with one of `statuses`. */
export async function answers(url: string, statuses: readonly number[] = [200]): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return statuses.includes(res.status);
}
