import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * `npm run audit:deps` (run by `.ci/run`): `npm audit --audit-level=high`, with
 * two rules plain npm lacks, so that nothing is ignored silently:
 *
 * - a high or critical advisory fails the run unless `.ci/audit-exceptions.json`
 *   lists it (GHSA id, package, reason, `until` date). Listed advisories are
 *   printed on every run, and an exception past its date fails again: an
 *   advisory without a fix is reviewed, not forgotten;
 * - when the registry does not serve the advisory database (a mirror answering
 *   404/405), the run prints a NOT AUDITED banner and fails only with
 *   AUDIT_REQUIRED=1: there is nothing to judge, and that is said loudly.
 */

/** An entry of `.ci/audit-exceptions.json`. */
export interface AuditException {
  /** `GHSA-xxxx-xxxx-xxxx`, from the advisory's URL. */
  advisory: string;
  package: string;
  /** Why it cannot be fixed now and why it is acceptable meanwhile. */
  reason: string;
  /** `YYYY-MM-DD`: from this day on the advisory fails the run again. */
  until: string;
}

/** A high or critical advisory found in the tree. */
export interface Finding {
  advisory: string;
  package: string;
  severity: string;
  title: string;
  fixAvailable: boolean;
}

export type AuditVerdict =
  | { kind: 'not_audited'; reason: string }
  | {
      kind: 'audited';
      failing: Finding[];
      excepted: Array<Finding & { exception: AuditException }>;
      expired: AuditException[];
      counts: Record<string, number>;
    };

const BLOCKING = new Set(['high', 'critical']);

interface AuditVia {
  source?: number;
  name?: string;
  title?: string;
  url?: string;
  severity?: string;
}

interface AuditReport {
  vulnerabilities?: Record<
    string,
    { name?: string; severity?: string; via?: Array<AuditVia | string>; fixAvailable?: unknown }
  >;
  metadata?: { vulnerabilities?: Record<string, number> };
  message?: string;
  error?: { summary?: string; detail?: string; code?: string };
}

/** The GHSA id of an advisory URL, else `npm:<source>`. */
function advisoryId(via: AuditVia): string {
  const ghsa = /GHSA-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}/i.exec(via.url ?? '');
  return ghsa ? ghsa[0] : `npm:${via.source ?? via.name ?? 'unknown'}`;
}

/** Judges the JSON of `npm audit --json` against the exceptions, as of `today` (`YYYY-MM-DD`). */
export function judgeAudit(report: AuditReport, exceptions: readonly AuditException[], today: string): AuditVerdict {
  if (!report.vulnerabilities) {
    const reason = report.message ?? report.error?.summary ?? report.error?.code ?? 'npm audit gave no report';
    return { kind: 'not_audited', reason };
  }
  const findings = new Map<string, Finding>();
  for (const vulnerability of Object.values(report.vulnerabilities)) {
    for (const via of vulnerability.via ?? []) {
      // A string names another vulnerable package; its advisory is listed under that package.
      if (typeof via === 'string' || !BLOCKING.has(via.severity ?? '')) continue;
      const finding: Finding = {
        advisory: advisoryId(via),
        package: via.name ?? vulnerability.name ?? 'unknown',
        severity: via.severity ?? 'unknown',
        title: via.title ?? '',
        fixAvailable: vulnerability.fixAvailable !== false,
      };
      findings.set(`${finding.advisory} ${finding.package}`, finding);
    }
  }
  const active = exceptions.filter((e) => e.until > today);
  const expired = exceptions.filter((e) => e.until <= today);
  const failing: Finding[] = [];
  const excepted: Array<Finding & { exception: AuditException }> = [];
  for (const finding of findings.values()) {
    const exception = active.find(
      (e) => e.advisory.toLowerCase() === finding.advisory.toLowerCase() && e.package === finding.package,
    );
    if (exception) excepted.push({ ...finding, exception });
    else failing.push(finding);
  }
  return { kind: 'audited', failing, excepted, expired, counts: report.metadata?.vulnerabilities ?? {} };
}

/** Lines to print and the exit code. */
export function reportVerdict(verdict: AuditVerdict, auditRequired: boolean): { lines: string[]; exitCode: number } {
  if (verdict.kind === 'not_audited') {
    return {
      lines: [
        '*** NOT AUDITED: npm audit could not read the advisory database from this registry ***',
        `*** ${verdict.reason} ***`,
        auditRequired
          ? 'audit: AUDIT_REQUIRED=1, failing'
          : 'audit: set AUDIT_REQUIRED=1 to fail the run when the audit cannot run',
      ],
      exitCode: auditRequired ? 1 : 0,
    };
  }
  const describe = (f: Finding) =>
    `${f.severity} ${f.advisory} in ${f.package}: ${f.title}${f.fixAvailable ? ' (a fix is available: npm audit fix)' : ' (no fix available)'}`;
  const lines = [`audit: advisories by severity ${JSON.stringify(verdict.counts)}`];
  for (const f of verdict.excepted)
    lines.push(`audit: EXCEPTED until ${f.exception.until}: ${describe(f)}; reason: ${f.exception.reason}`);
  for (const e of verdict.expired)
    lines.push(
      `audit: EXPIRED exception ${e.advisory} in ${e.package} (until ${e.until}): review it, then fix, extend or remove it`,
    );
  for (const f of verdict.failing) lines.push(`audit: FAIL ${describe(f)}`);
  const exitCode = verdict.failing.length > 0 ? 1 : 0;
  lines.push(
    exitCode === 0
      ? 'audit: no unexcepted high or critical advisory'
      : `audit: ${verdict.failing.length} high or critical advisory(ies); fix them or list them in .ci/audit-exceptions.json`,
  );
  return { lines, exitCode };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const root = resolve(import.meta.dirname, '..');
  const audit = spawnSync('npm', ['audit', '--audit-level=high', '--json'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  let report: AuditReport;
  try {
    report = JSON.parse(audit.stdout) as AuditReport;
  } catch {
    report = {
      message: `npm audit printed no JSON (exit ${audit.status}): ${audit.stderr.trim().split('\n').pop() ?? ''}`,
    };
  }
  const exceptionsPath = join(root, '.ci', 'audit-exceptions.json');
  const exceptions = existsSync(exceptionsPath)
    ? (JSON.parse(readFileSync(exceptionsPath, 'utf8')) as AuditException[])
    : [];
  const verdict = judgeAudit(report, exceptions, new Date().toISOString().slice(0, 10));
  const { lines, exitCode } = reportVerdict(verdict, process.env.AUDIT_REQUIRED === '1');
  process.stderr.write(`${lines.join('\n')}\n`);
  process.exit(exitCode);
}
