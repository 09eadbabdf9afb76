import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Architecture rule: worker processes never load the HTTP layer. The job
 * contract and the stream protocol are their only link to the API.
 */
function runtimeImports(entry: string): string[] {
  const seen = new Set<string>();
  const stack = [resolve(entry)];
  while (stack.length > 0) {
    const file = stack.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    // `import type` is erased at run time and does not load the module.
    for (const match of source.matchAll(/^import\s+(?!type\b)[^'"]*?from\s+'(\.[^']+)'/gm))
      stack.push(resolve(dirname(file), match[1] as string));
    for (const match of source.matchAll(/^import\s+'(\.[^']+)'/gm))
      stack.push(resolve(dirname(file), match[1] as string));
  }
  return [...seen].map((f) => relative(process.cwd(), f));
}

describe('layering', () => {
  it('the worker entry point never loads src/http', () => {
    const modules = runtimeImports('workers/provider-worker.ts');
    expect(modules).toContain('src/execution/chat-executor.ts');
    expect(modules.filter((m) => m.startsWith('src/http/'))).toEqual([]);
  });
});

/** Every import of `src/` between two top-level folders, as `from -> to` with the importing files. */
function folderEdges(): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  const files = execFileSync('git', ['ls-files', 'src'], { encoding: 'utf8' })
    .split('\n')
    .filter((f) => f.endsWith('.ts'));
  for (const file of files) {
    const from = file.split('/')[1] as string;
    // The entry points at the top of src/ are above every folder.
    if (from.endsWith('.ts')) continue;
    for (const match of readFileSync(file, 'utf8').matchAll(/from\s+'(\.[^']+)'/g)) {
      const to = relative('src', resolve(dirname(file), match[1] as string)).split('/')[0] as string;
      if (to === from || to.endsWith('.ts')) continue;
      const key = `${from} -> ${to}`;
      edges.set(key, [...(edges.get(key) ?? []), file]);
    }
  }
  return edges;
}

describe('folders', () => {
  it('import the pipeline, the HTTP layer and the batches one way: no folder below reaches back up', () => {
    const edges = folderEdges();
    // The HTTP layer and the doors sit on top: only the composition roots import them.
    const upward = [...edges.keys()].filter(
      (edge) =>
        /-> (http|doors|composition)$/.test(edge) && !edge.startsWith('composition ') && !edge.startsWith('http '),
    );
    expect(upward).toEqual([]);
    // The pipeline runs on the queue, the caches and the rest; none of them imports it back, the batches aside (a line runs it).
    expect(
      [...edges.keys()].filter(
        (edge) => edge.endsWith('-> pipeline') && !/^(http|doors|batches|composition|observability) /.test(edge),
      ),
    ).toEqual([]);
    for (const edge of ['queue -> batches', 'queue -> cache', 'queue -> pipeline', 'doors -> http'])
      expect(edges.get(edge), edge).toBeUndefined();
  });
});
