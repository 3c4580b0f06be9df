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
      info.importedFiles
        .map((f) => f.fileName)
        .filter((f) => f.startsWith('.'))
        .map((f) => path.join(path.dirname(file), f).replace(/\.js$/, '.ts')),
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
  assert.deepEqual(
    circles(graph).map((c) => c.join(' → ')),
    [],
  );
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
  assert.deepEqual(
    info.importedFiles.map((f) => f.fileName),
    ['./x.js', './y.js', './z.js'],
  );
});

/**
 * The folders of src/, lowest layer first. A folder imports only from itself and from folders
 * before it here, so a folder's place says what it may use: the shared types in `core` are
 * everyone's, a channel may use the intake but the intake never a channel, and the wiring in
 * `app` (with src/main.ts, the file at the top) sees everything. A new folder gets its line here.
 */
export const LAYERS = [
  'core', //       errors, log, text/retry helpers, shared message and channel types
  'storage', //    atomic files, locks, paths, append-only logs
  'config', //     settings from the environment and runtime-config.json
  'media', //      images as references; fetching them from a channel
  'sessions', //   the session model, its store, log and writer
  'queue', //      the per-chat FIFO and the inbox journal
  'llm', //        the LLM client, model catalogue, tokens
  'memory', //     MEMORY.md, daily notes, history, versions, consolidation, compaction
  'index', //      memory.db: store, search, upkeep
  'usage', //      usage.db and DAILY_TOKEN_BUDGET
  'reminders', //  schedules.db and delivery
  'tools', //      the tools the model may call
  'mcp', //        tools from MCP servers
  'scheduler', //  the nightly jobs
  'turn', //       Turn, the order table, the runner, the tool loop, context fit, auto-compaction
  'features', //   one folder per user-facing feature
  'context', //    the prompt's sections
  'systems', //    one file per pipeline system
  'privacy', //    forget, purge, export
  'commands', //   /new, /compact, /status …
  'dispatch', //   the intake: journal, limits, queue, command or turn
  'channels', //   Telegram and the terminal
  'web', //        the memory page
  'cli', //        npm run memory | pair | doctor | setup
  'app', //        wiring
  '(main.ts)', //  src/main.ts, the top
] as const;

/**
 * Inside a folder split by job, the same rule one level down: src/index/ keeps its tables
 * (store/) below the ranking (search/), both below the facade in src/index/ itself (MemoryIndex,
 * the outage guard), and the background work that goes through the facade (upkeep/) on top.
 */
export const SUBLAYERS: Record<string, readonly string[]> = {
  index: ['store', 'search', '(index)', 'upkeep'],
};

/** The folder of a file under src/ (its first path part; a file directly in src/ is the top). */
function folderOf(file: string): string {
  const rel = path.relative('src', file).split(path.sep);
  return rel.length === 1 ? '(main.ts)' : rel[0]!;
}

/** Every import from one folder into another that stands higher (or is not listed), as text. */
function upImports(graph: Map<string, string[]>): string[] {
  const rank = (folder: string) => (LAYERS as readonly string[]).indexOf(folder);
  const out: string[] = [];
  for (const [file, deps] of graph) {
    const from = folderOf(file);
    for (const dep of deps) {
      const to = folderOf(dep);
      if (to === from) continue;
      if (rank(from) < 0 || rank(to) < 0) out.push(`${file} → ${dep}: folder ${rank(from) < 0 ? from : to} is not in LAYERS`);
      else if (rank(to) > rank(from)) out.push(`${file} → ${dep}: ${from} may not import ${to} (a higher layer)`);
    }
  }
  return out.sort();
}

test('folders are layers: no import into a higher folder, so no circle between folders', () => {
  const graph = importGraph('src');
  const folders = new Set([...graph.keys()].map(folderOf));
  assert.deepEqual(
    [...folders].filter((f) => !(LAYERS as readonly string[]).includes(f)),
    [],
    'every folder of src/ has its place in LAYERS',
  );
  assert.deepEqual(upImports(graph), []);
});

/** Imports between the parts of a folder listed in SUBLAYERS that go up (or into a part not listed). */
function upImportsWithin(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [folder, parts] of Object.entries(SUBLAYERS)) {
    const partOf = (file: string) => {
      const rel = path.relative(path.join('src', folder), file).split(path.sep);
      return rel.length === 1 ? `(${folder})` : rel[0]!;
    };
    for (const [file, deps] of graph) {
      if (folderOf(file) !== folder) continue;
      for (const dep of deps) {
        if (folderOf(dep) !== folder) continue;
        const from = partOf(file);
        const to = partOf(dep);
        if (from === to) continue;
        if (!parts.includes(from) || !parts.includes(to)) out.push(`${file} → ${dep}: ${parts.includes(from) ? to : from} is not in SUBLAYERS.${folder}`);
        else if (parts.indexOf(to) > parts.indexOf(from)) out.push(`${file} → ${dep}: ${folder}/${from} may not import ${folder}/${to}`);
      }
    }
  }
  return out.sort();
}

test('a folder split by job keeps its parts in layers too (src/index: store, search, the facade, upkeep)', () => {
  const graph = importGraph('src');
  assert.deepEqual(upImportsWithin(graph), []);
  const g = new Map([[path.join('src', 'index', 'store', 'db.ts'), [path.join('src', 'index', 'search', 'search.ts')]]]);
  assert.deepEqual(upImportsWithin(g), [
    `${path.join('src', 'index', 'store', 'db.ts')} → ${path.join('src', 'index', 'search', 'search.ts')}: index/store may not import index/search`,
  ]);
});

test('the layer check sees an import into a higher folder and a folder nobody listed', () => {
  const g = new Map([
    [path.join('src', 'core', 'a.ts'), [path.join('src', 'turn', 'turn.ts')]],
    [path.join('src', 'turn', 'turn.ts'), [path.join('src', 'core', 'a.ts')]],
    [path.join('src', 'gadgets', 'x.ts'), [path.join('src', 'core', 'a.ts')]],
  ]);
  assert.deepEqual(upImports(g), [
    `${path.join('src', 'core', 'a.ts')} → ${path.join('src', 'turn', 'turn.ts')}: core may not import turn (a higher layer)`,
    `${path.join('src', 'gadgets', 'x.ts')} → ${path.join('src', 'core', 'a.ts')}: folder gadgets is not in LAYERS`,
  ]);
});
