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
    for (const match of source.matchAll(/^import\s+(?!type\b)[^'"]*?from\s+'(\.[^']+)'/gm)) stack.push(resolve(dirname(file), match[1] as string));
    for (const match of source.matchAll(/^import\s+'(\.[^']+)'/gm)) stack.push(resolve(dirname(file), match[1] as string));
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
