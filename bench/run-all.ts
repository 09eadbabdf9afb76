import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `npm run bench`: runs every `bench/*.bench.ts` in its own process, one after
 * the other (so they do not compete for the two cores), and prints each one's
 * report. `npm run bench -- cache` runs only files whose name contains "cache".
 * BENCH_SMOKE=1 asks each bench for a short run (CI).
 */
const dir = import.meta.dirname;
const filter = process.argv[2];
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts') && (!filter || f.includes(filter)))
  .sort();
let failed = 0;
for (const file of files) {
  process.stdout.write(`\n## ${file}\n\n`);
  const run = spawnSync(process.execPath, ['--experimental-strip-types', join(dir, file)], {
    stdio: 'inherit',
    env: process.env,
  });
  if (run.status !== 0) {
    failed++;
    process.stdout.write(`\n${file} failed (exit ${run.status})\n`);
  }
}
process.exit(failed > 0 ? 1 : 0);
