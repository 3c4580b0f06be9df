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
  'core', //       errors, log, text/retry helpers, the command-line grammar, shared message and channel types
  'storage', //    atomic files, locks, paths, append-only logs
  'config', //     settings from the environment and runtime-config.json
  'media', //      images as references; fetching them from a channel
  'sessions', //   the session model, its store, log and writer
  'queue', //      the per-chat FIFO and the inbox journal
  'llm', //        the LLM client, model catalogue, tokens
  'memory', //     MEMORY.md, daily notes, history, versions, consolidation, compaction
  'index', //      memory.db: store, search, upkeep
  'tools', //      the Tool contract and the registry
  'mcp', //        tools from MCP servers
  'turn', //       the kernel: Turn, the order table, the runner, the System / Command / Feature contracts; context fit, auto-compaction
  'features', //   one folder per user-facing feature, none importing another (below)
  'dispatch', //   the intake: journal, limits, queue, the command router, /help, /new, turn-run
  'channels', //   Telegram and the terminal
  'web', //        the memory page
  'cluster', //    several processes on one database: leases, chat claims, /stop across them (wired by the app)
  'app', //        builds the parts and installs the features; the stop order; the list of channels
  'cli', //        npm run memory | pair | doctor | setup: entry points like main.ts, reading the settings with the app's channels
  '(main.ts)', //  src/main.ts, the top
] as const;

/**
 * Inside a folder split by job, the same rule one level down: src/index/ keeps its tables
 * (store/) below the ranking (search/), both below the facade in src/index/ itself (MemoryIndex,
 * the outage guard), and the background work that goes through the facade (upkeep/) on top.
 */
export const SUBLAYERS: Record<string, readonly string[]> = {
  index: ['store', 'search', '(index)', 'pg', 'upkeep'],
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

test('a folder split by job keeps its parts in layers too (src/index: store, search, the facade, its PostgreSQL form, upkeep)', () => {
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

/** The folder of src/features/ a file is in (undefined outside src/features/). */
function featureOf(file: string): string | undefined {
  const rel = path.relative(path.join('src', 'features'), file).split(path.sep);
  return rel.length > 1 && rel[0] !== '..' ? rel[0] : undefined;
}

/** Imports from one folder of src/features/ into another, as text. */
function crossFeatureImports(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [file, deps] of graph) {
    const from = featureOf(file);
    if (!from) continue;
    for (const dep of deps) {
      const to = featureOf(dep);
      if (to && to !== from) out.push(`${file} → ${dep}: features/${from} may not import features/${to}`);
    }
  }
  return out.sort();
}

test('no feature imports another: a feature is changed in its own folder (what two share lives below, in turn/ or a store)', () => {
  const graph = importGraph('src');
  assert.ok(
    [...graph.keys()].some((f) => featureOf(f) === 'reminders'),
    'the walk found the features',
  );
  assert.deepEqual(crossFeatureImports(graph), []);
  const g = new Map([[path.join('src', 'features', 'privacy', 'purge.ts'), [path.join('src', 'features', 'reminders', 'store.ts')]]]);
  assert.deepEqual(crossFeatureImports(g), [
    `${path.join('src', 'features', 'privacy', 'purge.ts')} → ${path.join('src', 'features', 'reminders', 'store.ts')}: features/privacy may not import features/reminders`,
  ]);
});

/** What a channel may build on: the shared types, files, settings and media; the rest it is given (the Channel contract, core/channel.ts). */
const CHANNEL_MAY_IMPORT = ['core', 'storage', 'config', 'media', 'channels'];

/** Imports from src/channels/ into a folder a channel may not use, as text. */
function channelReach(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [file, deps] of graph) {
    if (folderOf(file) !== 'channels') continue;
    for (const dep of deps) if (!CHANNEL_MAY_IMPORT.includes(folderOf(dep))) out.push(`${file} → ${dep}: a channel may not import ${folderOf(dep)}`);
  }
  return out.sort();
}

test('a channel is a provider: it imports only core, storage, config and media (the intake, the turn and the features reach it through the Channel contract)', () => {
  const graph = importGraph('src');
  assert.deepEqual(channelReach(graph), []);
  const g = new Map([[path.join('src', 'channels', 'telegram', 'channel.ts'), [path.join('src', 'dispatch', 'stop.ts'), path.join('src', 'core', 'log.ts')]]]);
  assert.deepEqual(channelReach(g), [
    `${path.join('src', 'channels', 'telegram', 'channel.ts')} → ${path.join('src', 'dispatch', 'stop.ts')}: a channel may not import dispatch`,
  ]);
});

/** Where `telegram` is spelled in a file's code — identifiers, strings, import paths; comments and prose capitals aside. */
function spellsTelegram(text: string): boolean {
  const file = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  let found = false;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) found = node.text.includes('telegram');
    else if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node))
      found = node.text.includes('telegram');
    if (!found) ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

test("nothing below app/ spells a channel's name: only channels/telegram/ says 'telegram'", () => {
  const rank = (folder: string) => (LAYERS as readonly string[]).indexOf(folder);
  const below = sources('src').filter((f) => rank(folderOf(f)) < rank('app') && !f.startsWith(path.join('src', 'channels', 'telegram') + path.sep));
  const spelling = below
    .filter((f) => spellsTelegram(readFileSync(f, 'utf8')))
    .map((f) => path.relative('src', f).split(path.sep).join('/'))
    .sort();
  assert.deepEqual(spelling, []);
  // The reading itself: code counts, comments and the capitalised name in a sentence do not.
  assert.equal(spellsTelegram('const c = config.telegram;'), true);
  assert.equal(spellsTelegram("import { x } from '../channels/telegram/x.js';"), true);
  assert.equal(spellsTelegram('const t = `a ${b} telegram:1`;'), true);
  assert.equal(spellsTelegram("// telegram\n/** telegram */\nconst s = 'from Telegram';"), false);
});

/** The names a module exports (declarations and export lists), with what each is. */
function exportsOf(file: string): Array<{ name: string; kind: string; returns?: string }> {
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: Array<{ name: string; kind: string; returns?: string }> = [];
  for (const st of src.statements) {
    const exported = ts.canHaveModifiers(st) && ts.getModifiers(st)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (ts.isExportDeclaration(st) || ts.isExportAssignment(st)) out.push({ name: st.getText(src), kind: 're-export' });
    else if (exported && ts.isFunctionDeclaration(st)) out.push({ name: st.name?.text ?? '', kind: 'function', returns: st.type?.getText(src) });
    else if (exported && ts.isVariableStatement(st)) for (const d of st.declarationList.declarations) out.push({ name: d.name.getText(src), kind: 'variable' });
    else if (exported && (ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st) || ts.isClassDeclaration(st) || ts.isEnumDeclaration(st)))
      out.push({ name: st.name?.text ?? '', kind: 'type' });
  }
  return out;
}

/** `memory-access` → `memoryAccessFeature`: the factory a feature folder's index.ts exports. */
const factoryName = (folder: string) => `${folder.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase())}Feature`;

const FEATURES_DIR = path.join('src', 'features');
const featureFolders = () => readdirSync(FEATURES_DIR).filter((n) => statSync(path.join(FEATURES_DIR, n)).isDirectory());

test('every folder of src/features/ exports one Feature factory from its index.ts, named after it (and its dependencies as types only)', () => {
  const folders = featureFolders();
  assert.ok(folders.length >= 12, `the features are found: ${folders.join(', ')}`);
  for (const folder of folders) {
    const index = path.join(FEATURES_DIR, folder, 'index.ts');
    const values = exportsOf(index).filter((e) => e.kind !== 'type');
    assert.deepEqual(
      values,
      [{ name: factoryName(folder), kind: 'function', returns: 'Feature' }],
      `${index} exports one thing: function ${factoryName(folder)}(…): Feature`,
    );
  }
});

test('the app installs every feature once: app/features.ts imports each folder’s factory from its index.ts and calls it once', () => {
  const file = path.join('src', 'app', 'features.ts');
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const imported = new Map<string, string>();
  for (const st of src.statements) {
    if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier)) continue;
    const m = /^\.\.\/features\/([^/]+)\/(.+)$/.exec(st.moduleSpecifier.text);
    if (!m) continue;
    assert.equal(m[2], 'index.js', `${file} imports a feature through its index.ts only: ${st.moduleSpecifier.text}`);
    for (const el of st.importClause?.namedBindings && ts.isNamedImports(st.importClause.namedBindings) ? st.importClause.namedBindings.elements : [])
      imported.set(el.name.text, m[1]!);
  }
  const calls = new Map<string, number>();
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && imported.has(node.expression.text))
      calls.set(node.expression.text, (calls.get(node.expression.text) ?? 0) + 1);
    ts.forEachChild(node, visit);
  };
  visit(src);
  const installed = [...imported].map(([fn, folder]) => `${folder}: ${fn} ×${calls.get(fn) ?? 0}`).sort();
  assert.deepEqual(
    installed,
    featureFolders()
      .map((folder) => `${folder}: ${factoryName(folder)} ×1`)
      .sort(),
  );
});
