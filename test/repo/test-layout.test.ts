import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Where a test goes (docs/testing.md#where-a-new-test-goes): a file that starts gateway processes ends in
 * `.e2e.test.ts`, so `npm run test:unit` can leave them out and a reader knows what a file costs; and no two
 * test files share a name, so a failure's file name says which one.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const testFiles = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'test'], {
  cwd: ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => file.endsWith('.test.ts'));

/** Starts an API or worker process: through test/support/processes.ts, or the start script itself. */
const STARTS_PROCESSES = /\b(?:startGateway|spawnGatewayProcess|startApiReplica)\(|\[\s*'scripts\/start\.sh'/;

describe('the test layout', () => {
  it('names every test file that starts gateway processes *.e2e.test.ts (the reliability suite aside)', () => {
    const starting = testFiles.filter(
      (file) =>
        !file.startsWith('test/reliability/') && STARTS_PROCESSES.test(readFileSync(resolve(ROOT, file), 'utf8')),
    );
    expect(starting.length).toBeGreaterThan(20);
    expect(starting.filter((file) => !file.endsWith('.e2e.test.ts'))).toEqual([]);
  });

  it('spells the mark one way: .e2e.test.ts, never -e2e.test.ts', () => {
    expect(testFiles.filter((file) => /[-_]e2e\.test\.ts$/.test(file))).toEqual([]);
  });

  it('gives no two test files the same name', () => {
    const names = testFiles.map((file) => basename(file));
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  });
});
