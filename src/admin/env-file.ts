import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseEnv } from 'node:util';

/**
 * `ENV_FILE`: an optional dotenv file layered over the process environment,
 * read at start and again on every configuration reload. It is how
 * "re-read the environment" means something for a running process: rotate a
 * provider key or change the rate limit in the file, then reload. Values in
 * the file win over the process environment; a variable removed from the
 * file gets its original value back.
 */
export class EnvFile {
  readonly path: string;
  private readonly env: NodeJS.ProcessEnv;
  /** Original values of the variables the file has set (undefined: was unset). */
  private readonly originals = new Map<string, string | undefined>();
  private applied = new Set<string>();

  constructor(path: string, env: NodeJS.ProcessEnv = process.env) {
    this.path = path;
    this.env = env;
  }

  /** Reads `ENV_FILE` from `env` and applies the file at once; `undefined` when unset. Throws when unreadable. */
  static applyAtStart(env: NodeJS.ProcessEnv = process.env): EnvFile | undefined {
    const path = env.ENV_FILE?.trim();
    if (!path) return undefined;
    const file = new EnvFile(path, env);
    file.apply(file.parse(readText(path, () => readFileSync(path, 'utf8'))));
    return file;
  }

  /** Reads and parses the file. */
  async read(): Promise<Record<string, string>> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      throw new EnvFileError(
        `cannot read ENV_FILE ${this.path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    return this.parse(text);
  }

  private parse(text: string): Record<string, string> {
    // ENV_FILE cannot point somewhere else from inside itself.
    const { ENV_FILE: _ignored, ...vars } = parseEnv(text) as Record<string, string>;
    return vars;
  }

  /** The environment as it would be after {@link apply}, without touching it. */
  preview(vars: Record<string, string>): NodeJS.ProcessEnv {
    const next: NodeJS.ProcessEnv = { ...this.env };
    for (const name of this.applied) if (!(name in vars)) restore(next, name, this.originals.get(name));
    return Object.assign(next, vars);
  }

  /** Sets the file's variables in the environment and restores those it no longer sets. */
  apply(vars: Record<string, string>): void {
    for (const name of this.applied) {
      if (!(name in vars)) restore(this.env, name, this.originals.get(name));
    }
    for (const [name, value] of Object.entries(vars)) {
      if (!this.originals.has(name)) this.originals.set(name, this.env[name]);
      this.env[name] = value;
    }
    this.applied = new Set(Object.keys(vars));
  }
}

function restore(env: NodeJS.ProcessEnv, name: string, original: string | undefined): void {
  if (original === undefined) delete env[name];
  else env[name] = original;
}

function readText(path: string, read: () => string): string {
  try {
    return read();
  } catch (err) {
    throw new EnvFileError(
      `cannot read ENV_FILE ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

export class EnvFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvFileError';
  }
}
