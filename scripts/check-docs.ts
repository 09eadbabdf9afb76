import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * `npm run check:docs`: keeps README.md, bench/README.md and docs/**\/*.md
 * pointing at things that exist. Reports, as `file:line: message`:
 *
 * - a relative markdown link `[text](path)` or `[text](path#anchor)` whose
 *   file does not exist, or whose anchor no heading of the target produces
 *   (GitHub's slug rules); `[text](#anchor)` is checked against the page itself;
 * - a code span (or a token of a shell code block) that looks like a
 *   repository path (`src/...`, `test/...`, `bench/...`, `scripts/...`,
 *   `docs/...`, `workers/...`, `bin/...`, `.ci/...`, or a root file such as
 *   `config.yaml`) and names nothing in the repository; tokens containing `*`,
 *   `<`, `{` or an ellipsis are patterns and are skipped;
 * - `npm run <script>` naming a script that package.json does not have.
 *
 * External links (`http:`, `https:`, `mailto:` ...) are not checked.
 * Exits 1 when anything is reported.
 */

export interface DocProblem {
  /** Path of the markdown file, relative to the root, with `/` separators. */
  file: string;
  /** 1-based line number. */
  line: number;
  message: string;
}

/** Folders whose paths a code span may name. */
const PATH_PREFIXES = ['src/', 'test/', 'bench/', 'scripts/', 'docs/', 'workers/', 'bin/', '.ci/'];

/** Files at the repository's root that a code span may name on their own. */
const ROOT_FILES = new Set([
  'config.yaml',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'Dockerfile',
  'Procfile',
  'docker-compose.yml',
  'README.md',
  'vitest.config.ts',
  'vitest.reliability.config.ts',
]);

/** Fenced code blocks whose lines are commands, checked like code spans. */
const SHELL_FENCES = new Set(['', 'bash', 'sh', 'shell', 'console', 'zsh']);

/** The markdown files checked under `root`: README.md, bench/README.md and docs/**\/*.md. */
export function docFiles(root: string): string[] {
  const files = ['README.md', join('bench', 'README.md')].filter((f) => existsSync(join(root, f)));
  const walk = (dir: string): void => {
    if (!existsSync(join(root, dir))) return;
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  walk('docs');
  return files;
}

/** GitHub's heading anchor: lower case, punctuation other than `-` and `_` removed, spaces to `-`. */
export function slugify(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML tags
    .replace(/[`*]/g, ''); // code and emphasis markers
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

interface Line {
  number: number;
  text: string;
  /** Set for lines inside a fenced code block: the fence's language. */
  fence?: string;
}

/** Splits a markdown file into lines, marking those inside fenced code blocks. */
function scanLines(source: string): Line[] {
  const lines: Line[] = [];
  let fence: { marker: string; lang: string } | undefined;
  source.split(/\r?\n/).forEach((text, i) => {
    const open = /^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)/.exec(text);
    if (fence) {
      if (open && open[1]?.startsWith(fence.marker) && text.trim().replace(/[`~]/g, '') === '') fence = undefined;
      else lines.push({ number: i + 1, text, fence: fence.lang });
      return;
    }
    if (open) {
      fence = { marker: open[1] as string, lang: (open[2] ?? '').toLowerCase() };
      return;
    }
    lines.push({ number: i + 1, text });
  });
  return lines;
}

/** Anchors a markdown file offers: its headings' slugs (duplicates numbered) and explicit `<a id>`/`<a name>`. */
function anchorsOf(source: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of scanLines(source)) {
    if (line.fence !== undefined) continue;
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line.text);
    if (heading) {
      const base = slugify(heading[1] as string);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const match of line.text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] as string);
  }
  return anchors;
}

/** Inline code spans of one line. */
function codeSpans(text: string): string[] {
  const spans: string[] = [];
  for (const match of text.matchAll(/(`+)(.+?)\1(?!`)/g)) spans.push((match[2] as string).trim());
  return spans;
}

/** A token that names a repository path, cleaned of `./` and a `:line` suffix; undefined otherwise. */
function repoPath(token: string): string | undefined {
  if (/[*<{]|\.\.\.|…/.test(token)) return undefined;
  let path = token
    .replace(/^\.\//, '')
    .replace(/[,;.)]+$/, '')
    .replace(/:\d+$/, '');
  if (path.endsWith('/')) path = path.slice(0, -1);
  if (ROOT_FILES.has(path)) return path;
  return PATH_PREFIXES.some((prefix) => path.startsWith(prefix) && path.length > prefix.length) ? path : undefined;
}

/** Checks the documentation under `root`; returns every problem found, in file and line order. */
export function checkDocs(root: string): DocProblem[] {
  const problems: DocProblem[] = [];
  const pkgPath = join(root, 'package.json');
  const scripts = new Set(
    Object.keys(
      existsSync(pkgPath)
        ? ((JSON.parse(readFileSync(pkgPath, 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {})
        : {},
    ),
  );
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string): Set<string> => {
    let set = anchorCache.get(file);
    if (!set) {
      set = anchorsOf(readFileSync(file, 'utf8'));
      anchorCache.set(file, set);
    }
    return set;
  };

  for (const file of docFiles(root)) {
    const absolute = join(root, file);
    const shown = file.split(sep).join('/');
    const report = (line: number, message: string): void => {
      problems.push({ file: shown, line, message });
    };
    const checkCode = (line: number, code: string): void => {
      for (const match of code.matchAll(/\bnpm run ([\w:.-]+)/g)) {
        const script = match[1] as string;
        if (!scripts.has(script)) report(line, `npm script '${script}' is not in package.json`);
      }
      for (const token of code.split(/\s+/)) {
        const path = repoPath(token);
        if (path !== undefined && !existsSync(join(root, path)))
          report(line, `code reference '${path}' names no file in the repository`);
      }
    };

    for (const { number, text, fence } of scanLines(readFileSync(absolute, 'utf8'))) {
      if (fence !== undefined) {
        if (SHELL_FENCES.has(fence)) checkCode(number, text);
        continue;
      }
      for (const span of codeSpans(text)) checkCode(number, span);

      const prose = text.replace(/(`+)(.+?)\1(?!`)/g, '');
      for (const match of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const target = match[1] as string;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto: ...
        const hash = target.indexOf('#');
        const pathPart = decodeURI(hash >= 0 ? target.slice(0, hash) : target);
        const anchor = hash >= 0 ? decodeURIComponent(target.slice(hash + 1)) : undefined;
        const resolved = pathPart === '' ? absolute : resolve(dirname(absolute), pathPart);
        if (!existsSync(resolved)) {
          report(number, `link target '${pathPart}' does not exist`);
          continue;
        }
        if (anchor === undefined || anchor === '' || statSync(resolved).isDirectory() || !resolved.endsWith('.md'))
          continue;
        if (!anchors(resolved).has(anchor)) {
          const where = pathPart === '' ? 'this page' : relative(root, resolved).split(sep).join('/');
          report(number, `anchor '#${anchor}' is not a heading of ${where}`);
        }
      }
    }
  }
  problems.push(...unnamedFolders(root));
  return problems;
}

/** Every folder of `src/` must be named (as `src/<folder>/`) in docs/architecture.md's source layout. */
function unnamedFolders(root: string): DocProblem[] {
  const page = join(root, 'docs', 'architecture.md');
  const src = join(root, 'src');
  if (!existsSync(page) || !existsSync(src)) return [];
  const text = readFileSync(page, 'utf8');
  return readdirSync(src, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !text.includes(`src/${entry.name}/`))
    .map((entry) => ({
      file: 'docs/architecture.md',
      line: 1,
      message: `the folder 'src/${entry.name}/' is not named in the source layout`,
    }));
}

/** `file:line: message`, one per problem. */
export function formatProblems(problems: readonly DocProblem[]): string {
  return problems.map((p) => `${p.file}:${p.line}: ${p.message}`).join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const root = resolve(import.meta.dirname, '..');
  const problems = checkDocs(root);
  if (problems.length > 0) {
    process.stderr.write(`${formatProblems(problems)}\ncheck-docs: ${problems.length} problem(s)\n`);
    process.exit(1);
  }
  process.stdout.write(`check-docs: ${docFiles(root).length} files, links and code references all resolve\n`);
}
