import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { judgeAudit, reportVerdict, type AuditException } from '../../scripts/audit-dependencies.ts';

/**
 * How dependencies are installed: exactly the lock (`npm ci`, which succeeds
 * on it), no dependency's install script, every package that has one reviewed
 * in docs/reliability.md, and the CI audit that nothing slips through.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

interface LockEntry {
  version?: string;
  link?: boolean;
  hasInstallScript?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, LockEntry> };

/** Where Node (and npm) would find `name` for the package at `path`: its own node_modules, then each parent's. */
function resolveInLock(packages: Record<string, LockEntry>, path: string, name: string): string | undefined {
  let base = path;
  for (;;) {
    const candidate = base === '' ? `node_modules/${name}` : `${base}/node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (base === '') return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

/** `dependent -> dependency` for every dependency (optional ones included) the lock has no entry for. */
function missingFromLock(packages: Record<string, LockEntry>): string[] {
  const missing: string[] = [];
  for (const [path, entry] of Object.entries(packages)) {
    if (entry.link) continue;
    const names = [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.optionalDependencies ?? {}),
      ...(path === '' ? Object.keys(entry.devDependencies ?? {}) : []),
    ];
    for (const name of names) {
      if (!resolveInLock(packages, path, name)) missing.push(`${path || '(root)'} -> ${name}`);
    }
  }
  return missing;
}

/** Package names in the first column of the install-script table of docs/reliability.md. */
function reviewedInstallScripts(): string[] {
  const doc = read('docs/reliability.md');
  const section = doc.slice(doc.indexOf('## Persistence and the supply chain'));
  const table = section.slice(section.indexOf('| package with an install script |'));
  const rows = table.split('\n').filter((line) => line.startsWith('|'));
  return rows.flatMap((row) => /^\| `([^`]+)` \|/.exec(row)?.[1] ?? []);
}

describe('the lock file', () => {
  it('has an entry for every dependency of every package, optional and off-platform ones included', () => {
    expect(missingFromLock(lock.packages)).toEqual([]);
  });

  it('is accepted by npm ci as it stands', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-npm-ci-'));
    for (const file of ['package.json', 'package-lock.json', '.npmrc']) copyFileSync(join(ROOT, file), join(dir, file));
    const run = spawnSync('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).not.toContain('npm error');
    expect(run.status).toBe(0);
  });

  it('lists only packages with install scripts that docs/reliability.md reviews', () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts.length).toBeGreaterThan(0);
    expect([...new Set(withScripts)].sort()).toEqual(reviewedInstallScripts().sort());
  });
});

describe('installs', () => {
  it('bootstrap.sh installs exactly the lock without install scripts, with no npm install fallback', () => {
    const commands = read('scripts/bootstrap.sh')
      .split('\n')
      .filter((line) => !line.trim().startsWith('#') && /\bnpm\s+(ci|install|i)\b/.test(line));
    const ci = commands.filter((line) => /\bnpm\s+ci\b/.test(line));
    expect(ci).toHaveLength(1);
    expect(ci[0]).toContain('--ignore-scripts');
    // The one npm install left fetches Node 22 itself into .tools/, never the project's dependencies.
    const installs = commands.filter((line) => /\bnpm\s+(install|i)\b/.test(line));
    for (const line of installs) expect(line).toMatch(/--prefix "\$NODE_DIR".*\bnode@22\b/);
    expect(read('scripts/bootstrap.sh')).not.toMatch(/npm ci[^\n]*\|\|/);
  });

  it('the Dockerfile installs the lock without install scripts, and so does any npm command in the project', () => {
    const dockerfile = read('Dockerfile');
    expect(dockerfile).toMatch(/RUN \$\{NPM\} ci [^\n]*--ignore-scripts/);
    expect(dockerfile).toMatch(/^ARG NPM=npm$/m);
    expect(dockerfile).not.toMatch(/npm install/);
    expect(dockerfile).toMatch(/COPY [^\n]*\.npmrc/);
    expect(read('.npmrc')).toMatch(/^ignore-scripts=true$/m);
  });

  it('CI runs the dependency audit', () => {
    expect(read('.ci/run')).toMatch(/npm run -s audit:deps/);
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts['audit:deps']).toContain('scripts/audit-dependencies.ts');
    expect(read('scripts/audit-dependencies.ts')).toContain("'audit', '--audit-level=high'");
  });
});

describe('the audit verdict', () => {
  const advisory = (name: string, severity: string, ghsa: string) => ({
    source: 1,
    name,
    title: `${name} is vulnerable`,
    url: `https://github.com/advisories/${ghsa}`,
    severity,
  });
  const report = (entries: Array<{ name: string; severity: string; ghsa: string; fix?: boolean }>) => ({
    vulnerabilities: Object.fromEntries(
      entries.map((e) => [
        e.name,
        {
          name: e.name,
          severity: e.severity,
          via: [advisory(e.name, e.severity, e.ghsa), 'some-parent'],
          fixAvailable: e.fix ?? true,
        },
      ]),
    ),
    metadata: { vulnerabilities: { high: entries.filter((e) => e.severity === 'high').length } },
  });
  const exception: AuditException = {
    advisory: 'GHSA-aaaa-bbbb-cccc',
    package: 'nofix',
    reason: 'not reachable from the gateway',
    until: '2026-12-31',
  };

  it('fails on a high or critical advisory, not on a moderate one', () => {
    const verdict = judgeAudit(
      report([
        { name: 'bad', severity: 'critical', ghsa: 'GHSA-1111-2222-3333' },
        { name: 'meh', severity: 'moderate', ghsa: 'GHSA-4444-5555-6666' },
      ]),
      [],
      '2026-11-01',
    );
    const { lines, exitCode } = reportVerdict(verdict, false);
    expect(exitCode).toBe(1);
    expect(lines.filter((l) => l.includes('FAIL'))).toEqual([
      'audit: FAIL critical GHSA-1111-2222-3333 in bad: bad is vulnerable (a fix is available: npm audit fix)',
    ]);
    expect(
      reportVerdict(
        judgeAudit(report([{ name: 'meh', severity: 'moderate', ghsa: 'GHSA-4444-5555-6666' }]), [], '2026-11-01'),
        false,
      ).exitCode,
    ).toBe(0);
  });

  it('lets a listed advisory without a fix pass, printed on every run, until its date', () => {
    const found = report([{ name: 'nofix', severity: 'high', ghsa: 'GHSA-aaaa-bbbb-cccc', fix: false }]);
    const before = reportVerdict(judgeAudit(found, [exception], '2026-11-01'), false);
    expect(before.exitCode).toBe(0);
    expect(before.lines.join('\n')).toContain(
      'EXCEPTED until 2026-12-31: high GHSA-aaaa-bbbb-cccc in nofix: nofix is vulnerable (no fix available); reason: not reachable from the gateway',
    );
    const after = reportVerdict(judgeAudit(found, [exception], '2026-12-31'), false);
    expect(after.exitCode).toBe(1);
    expect(after.lines.join('\n')).toContain('EXPIRED exception GHSA-aaaa-bbbb-cccc');
  });

  it('says NOT AUDITED when the registry has no advisory database, and fails then only when required', () => {
    const refused = {
      message: '405 Method Not Allowed - POST https://registry.npmjs.org/-/npm/v1/security/advisories/bulk',
      statusCode: 405,
    };
    const verdict = judgeAudit(refused, [], '2026-11-01');
    expect(verdict.kind).toBe('not_audited');
    const lenient = reportVerdict(verdict, false);
    expect(lenient.lines[0]).toContain('NOT AUDITED');
    expect(lenient.exitCode).toBe(0);
    expect(reportVerdict(verdict, true).exitCode).toBe(1);
  });
});
