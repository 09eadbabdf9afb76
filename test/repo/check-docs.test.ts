import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkDocs, formatProblems, slugify } from '../../scripts/check-docs.ts';

/**
 * The documentation checker (`npm run check:docs`) on small throw-away
 * repositories: every kind of broken reference is reported with its file and
 * line, and a consistent folder reports nothing.
 */

const folders: string[] = [];

function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'check-docs-'));
  folders.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

afterEach(() => {
  for (const root of folders.splice(0)) rmSync(root, { recursive: true, force: true });
});

const PACKAGE = JSON.stringify({ scripts: { test: 'vitest run', bench: 'node bench/run-all.ts' } });

const CLEAN = {
  'package.json': PACKAGE,
  'config.yaml': 'providers: []\n',
  'src/server.ts': '',
  'scripts/start.sh': '',
  'README.md': [
    '# Gateway',
    '',
    'Run `./scripts/start.sh`, read [the API](docs/api.md#errors-and-limits) and [below](#quick-start).',
    'The entry point is `src/server.ts`; providers live in `config.yaml`; globs such as `test/**/*.ts`,',
    'placeholders such as `src/providers/<format>/` and `docs/{a,b}.md` are not paths. External: [x](https://example.com/nope).',
    '',
    '## Quick start',
    '',
    '```bash',
    'npm run bench -- gateway',
    '```',
    '',
    '```json',
    '{"path": "src/not-checked-in-json.ts"}',
    '```',
  ].join('\n'),
  'docs/api.md': '# API\n\n## Errors and limits\n\nSee [the README](../README.md) and `npm run test`.\n',
  'bench/README.md': 'Run `npm run bench`; results in [the API page](../docs/api.md).\n',
};

describe('check-docs', () => {
  it('reports nothing for a folder whose links and references all resolve', () => {
    expect(checkDocs(repo(CLEAN))).toEqual([]);
  });

  it('reports a broken link, a broken anchor, a missing code path and a missing npm script, each with file and line', () => {
    const root = repo({
      ...CLEAN,
      'docs/guide.md': [
        '# Guide',
        '',
        'See [the missing page](missing.md).',
        'See [a heading that is not there](api.md#no-such-heading).',
        'The code is in `src/does-not-exist.ts`.',
        'Run `npm run no-such-script`.',
        '',
        '```bash',
        './scripts/gone.sh && npm run also-missing',
        '```',
      ].join('\n'),
    });
    const problems = checkDocs(root);
    expect(problems).toEqual([
      { file: 'docs/guide.md', line: 3, message: "link target 'missing.md' does not exist" },
      { file: 'docs/guide.md', line: 4, message: "anchor '#no-such-heading' is not a heading of docs/api.md" },
      {
        file: 'docs/guide.md',
        line: 5,
        message: "code reference 'src/does-not-exist.ts' names no file in the repository",
      },
      { file: 'docs/guide.md', line: 6, message: "npm script 'no-such-script' is not in package.json" },
      { file: 'docs/guide.md', line: 9, message: "npm script 'also-missing' is not in package.json" },
      { file: 'docs/guide.md', line: 9, message: "code reference 'scripts/gone.sh' names no file in the repository" },
    ]);
    expect(formatProblems(problems).split('\n')[0]).toBe("docs/guide.md:3: link target 'missing.md' does not exist");
  });

  it('checks same-page anchors and numbers duplicate headings as GitHub does', () => {
    const root = repo({
      ...CLEAN,
      'docs/page.md': '# Page\n\n## Setup\n\n## Setup\n\n[first](#setup) [second](#setup-1) [third](#setup-2)\n',
    });
    expect(checkDocs(root)).toEqual([
      { file: 'docs/page.md', line: 7, message: "anchor '#setup-2' is not a heading of this page" },
    ]);
  });

  it('reports a folder of src/ that docs/architecture.md does not name', () => {
    const root = repo({
      ...CLEAN,
      'src/cache/a.ts': '',
      'src/queue/b.ts': '',
      'docs/architecture.md': '# Architecture\n\n| `src/cache/` | caches |\n',
    });
    expect(formatProblems(checkDocs(root))).toBe(
      "docs/architecture.md:1: the folder 'src/queue/' is not named in the source layout",
    );
  });

  it('makes GitHub slugs', () => {
    expect(slugify('Reload: `POST /admin/reload-config` or `SIGHUP`')).toBe('reload-post-adminreload-config-or-sighup');
    expect(slugify('Actions (`DLP_ACTION`)')).toBe('actions-dlp_action');
    expect(slugify("The design's floor at one connection")).toBe('the-designs-floor-at-one-connection');
    expect(slugify('config.yaml')).toBe('configyaml');
  });
});
