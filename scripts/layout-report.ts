/**
 * The shape of src/ in figures (issue "Features become rooms"): the longest import chain, the
 * pairs of folders joined by an import, files over 300 lines, and for a few features the files
 * and folders they span. `npx tsx scripts/layout-report.ts [--json]`.
 *
 * A feature's files are found by what they are about, not by where they are: the files whose
 * path matches the feature's pattern, plus those that import one of them and whose own text
 * names the feature (its command or its main type). Shared infrastructure (core, storage) is left
 * out. The patterns are written here once and used before and after a move alike.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const SRC = 'src';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const files = sources(SRC).sort();
const text = new Map(files.map((f) => [f, readFileSync(f, 'utf8')]));
const graph = new Map<string, string[]>();
for (const f of files) {
  const info = ts.preProcessFile(text.get(f)!, true, true);
  graph.set(
    f,
    info.importedFiles
      .map((i) => i.fileName)
      .filter((i) => i.startsWith('.'))
      .map((i) => path.join(path.dirname(f), i).replace(/\.js$/, '.ts'))
      .filter((i) => graph.has(i) || files.includes(i)),
  );
}

/** A file's folder: its path under src/ without the file name ('.' for src/main.ts). */
const folderOf = (f: string) => path.dirname(path.relative(SRC, f)) || '.';

// The longest chain of imports (the graph has no circle: test/imports.test.ts).
const memo = new Map<string, string[]>();
function longest(f: string): string[] {
  const m = memo.get(f);
  if (m) return m;
  let best: string[] = [];
  for (const d of graph.get(f) ?? []) {
    const c = longest(d);
    if (c.length > best.length) best = c;
  }
  const out = [f, ...best];
  memo.set(f, out);
  return out;
}
const chains = files.map(longest).sort((a, b) => b.length - a.length);

const pairs = new Set<string>();
for (const [f, deps] of graph) for (const d of deps) if (folderOf(f) !== folderOf(d)) pairs.add(`${folderOf(f)} → ${folderOf(d)}`);

const big = files
  .map((f) => ({ file: path.relative(SRC, f), lines: text.get(f)!.split('\n').length - 1 }))
  .filter((x) => x.lines > 300)
  .sort((a, b) => b.lines - a.lines);

const FEATURES: Record<string, { path: RegExp; names: RegExp }> = {
  '/model': { path: /(config\/models|chat-models|commands\/model)\.ts$|(^|\/)models\//, names: /\/model\b|ChatModels|chatModel\(/ },
  reminders: { path: /remind/, names: /\bReminder(Service|Store)\b|\/reminders\b/ },
  voice: { path: /(transcri|voice|audio)/, names: /\btranscri|\bvoice\b/i },
};
const infra = /^(core|storage)\//;
const spans = Object.entries(FEATURES).map(([name, f]) => {
  const own = files.filter((x) => f.path.test(path.relative(SRC, x)));
  const users = files.filter((x) => !own.includes(x) && (graph.get(x) ?? []).some((d) => own.includes(d)) && f.names.test(text.get(x)!));
  const all = [...own, ...users]
    .map((x) => path.relative(SRC, x))
    .filter((x) => !infra.test(x))
    .sort();
  return { feature: name, files: all.length, folders: new Set(all.map((x) => path.dirname(x))).size, list: all };
});

const report = {
  files: files.length,
  folders: new Set(files.map(folderOf)).size,
  longestChain: { steps: chains[0]!.length - 1, chain: chains[0]!.map((f) => path.relative(SRC, f)) },
  folderPairs: pairs.size,
  over300: big,
  spans,
};
if (process.argv.includes('--json')) console.log(JSON.stringify(report, null, 2));
else {
  console.log(`${report.files} files in ${report.folders} folders`);
  console.log(`longest import chain: ${report.longestChain.steps} steps: ${report.longestChain.chain.join(' → ')}`);
  console.log(`pairs of folders joined by an import: ${report.folderPairs}`);
  console.log(`files over 300 lines: ${big.length}${big.length ? ` (${big.map((b) => `${b.file} ${b.lines}`).join(', ')})` : ''}`);
  for (const s of spans) console.log(`${s.feature}: ${s.files} files in ${s.folders} folders: ${s.list.join(', ')}`);
}
