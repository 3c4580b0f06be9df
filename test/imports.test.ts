/**
 * The module graph of src/: no import circle, type-only and dynamic imports included. A circle
 * makes load order matter (a value read before its module finished loading is undefined) and
 * ties two modules so that neither can change alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Each file's relative imports (static, type-only, re-exports and `import()`), as file paths. */
function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(root)) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    graph.set(
      file,
      info.importedFiles.map((f) => f.fileName).filter((f) => f.startsWith('.')).map((f) => path.join(path.dirname(file), f).replace(/\.js$/, '.ts')),
    );
  }
  return graph;
}

/** Every circle found by a depth-first walk, each as the chain of files that closes it. */
function circles(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const dep of graph.get(file) ?? []) {
      if (!graph.has(dep)) continue;
      if (state.get(dep) === 'open') found.push([...stack.slice(stack.indexOf(dep)), dep]);
      else if (!state.has(dep)) visit(dep);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

test('no import circle in src/ (type-only and dynamic imports count)', () => {
  const graph = importGraph('src');
  assert.ok(graph.size > 50, 'the walk found the sources');
  assert.deepEqual(circles(graph).map((c) => c.join(' → ')), []);
});

test('the circle finder sees a circle through a type-only import', () => {
  const g = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['a.ts']],
  ]);
  assert.deepEqual(circles(g), [['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  // And the real parser records `import type` and `import()` (what a regex over "import {" would miss).
  const info = ts.preProcessFile("import type { X } from './x.js';\nconst y = await import('./y.js');\nexport { z } from './z.js';", true, true);
  assert.deepEqual(info.importedFiles.map((f) => f.fileName), ['./x.js', './y.js', './z.js']);
});
