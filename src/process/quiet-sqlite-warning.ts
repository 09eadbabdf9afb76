/**
 * Preloaded with `node --import` by scripts/start.sh and `npm start` / `npm run worker`: drops Node's one
 * "SQLite is an experimental feature" warning, which every process that loads `node:sqlite` prints and which
 * says nothing to act on. Every other warning is printed as Node prints it. A preload, because Node emits that
 * warning while it links the modules, before any of the gateway's code runs.
 */
const emitWarning = process.emitWarning;

function isSqliteExperimental(warning: string | Error, typeOrOptions: unknown): boolean {
  const message = typeof warning === 'string' ? warning : warning.message;
  const type =
    typeof typeOrOptions === 'string'
      ? typeOrOptions
      : typeof warning === 'string'
        ? (typeOrOptions as { type?: string } | undefined)?.type
        : warning.name;
  return type === 'ExperimentalWarning' && message.startsWith('SQLite is an experimental feature');
}

process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
  if (isSqliteExperimental(warning, rest[0])) return;
  (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
} as typeof process.emitWarning;
