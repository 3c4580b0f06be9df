// `npm run build` (and so `npm start`): src/ to dist/, compiling only what changed.
// `tsc -b` first compares the sources' times with dist/.tsbuildinfo and stops there when nothing
// changed (under a second; `tsc -p` parsed and bound all ~1,000 files of the program every time,
// 8–17 s before each start — docs/BENCHMARKS.md, "Start"). When a source changed it rebuilds
// incrementally, re-checking what depends on it. tsc never removes the output of a source that
// is gone: a stale dist/x.js would go on answering `import './x.js'` at run time even though the
// type check says x is missing, so the files without a source are removed here.
// Arguments go to tsc (`npm run build -- --verbose` says why it built or not).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

// The project folder (this file is in its scripts/), whatever folder it is run from.
const root = path.dirname(import.meta.dirname);
const tsc = createRequire(path.join(root, 'package.json')).resolve('typescript/bin/tsc');
const built = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.build.json', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });

/** Removes what tsc emitted for a source no longer in src/ (and folders left empty); returns what it removed. */
function prune(distDir, srcDir) {
  const removed = [];
  for (const e of readdirSync(distDir, { withFileTypes: true })) {
    const p = path.join(distDir, e.name);
    if (e.isDirectory()) {
      removed.push(...prune(p, path.join(srcDir, e.name)));
      if (readdirSync(p).length === 0) rmdirSync(p);
      continue;
    }
    // x.js, x.js.map (and x.d.ts) come from x.ts; a JSON file a source imports is copied as is.
    const m = /^(.*)\.(?:js|d\.ts)(?:\.map)?$/.exec(e.name);
    const source = m ? `${m[1]}.ts` : e.name.endsWith('.json') ? e.name : undefined;
    if (source && !existsSync(path.join(srcDir, source))) {
      unlinkSync(p);
      removed.push(path.relative(root, p));
    }
  }
  return removed;
}

const dist = path.join(root, 'dist');
if (existsSync(dist)) {
  const removed = prune(dist, path.join(root, 'src'));
  if (removed.length > 0) console.log(`build: removed ${removed.length} file(s) of sources no longer in src/: ${removed.join(', ')}`);
}
process.exit(built.status ?? 1);
