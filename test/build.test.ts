/**
 * `npm run build` (run by `npm start` before each start) compiles only what changed: a start
 * after no change reads no source and writes nothing to dist/, a changed source is rebuilt, a
 * deleted one leaves no stale file in dist/ that would still answer an import, and a build that
 * failed keeps failing until the error is fixed (it never counts as done). Run on a small
 * src/ in a copy of the project's build setup (package.json, the tsconfigs, scripts/build.mjs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, statSync, symlinkSync } from 'node:fs';
import { copyFile, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { childEnv, repoRoot, runToEnd } from './helpers/child.js';
import { tempDir } from './helpers/workspace.js';

/** Every file under `dir` with its modification time (ns). */
async function mtimes(dir: string): Promise<Record<string, bigint>> {
  const out: Record<string, bigint> = {};
  for (const name of await readdir(dir, { recursive: true })) {
    const st = statSync(path.join(dir, name), { bigint: true });
    if (st.isFile()) out[name] = st.mtimeNs;
  }
  return out;
}

test('npm run build compiles only what changed: nothing read or written after no change, a changed source rebuilt, a deleted one gone from dist/, a failed build never taken as done', {
  timeout: 240_000,
}, async () => {
  const ws = await tempDir('membot-build-');
  const dir = ws.dir;
  try {
    await mkdir(path.join(dir, 'scripts'));
    for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs']) await copyFile(path.join(repoRoot, f), path.join(dir, f));
    symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
    const src = (rel: string, text: string) => writeFile(path.join(dir, 'src', rel), text);
    await mkdir(path.join(dir, 'src', 'old'), { recursive: true });
    await src('main.ts', "import { greet } from './greet.js';\nconsole.log(greet('you'));\n");
    await src('greet.ts', 'export const greet = (who: string): string => `hello ${who}`;\n');
    await src('old/gone.ts', 'export const gone = 1;\n');
    // What tsc read (--listFiles) and wrote (--listEmittedFiles): nothing at all when nothing changed.
    const build = () => runToEnd('npm', ['run', '--silent', 'build', '--', '--listFiles', '--listEmittedFiles'], { env: childEnv(), cwd: dir });
    const run = () => execFileSync(process.execPath, [path.join(dir, 'dist', 'main.js')], { encoding: 'utf8' }).trim();

    const first = await build();
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.equal(run(), 'hello you');
    assert.ok(existsSync(path.join(dir, 'dist', 'old', 'gone.js')));

    const before = await mtimes(path.join(dir, 'dist'));
    const again = await build();
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout.trim(), '', 'a build after no change reads no source and emits nothing');
    assert.deepEqual(await mtimes(path.join(dir, 'dist')), before, 'dist/ untouched');

    await src('greet.ts', 'export const greet = (who: string): string => `hi ${who}`;\n');
    const changed = await build();
    assert.equal(changed.code, 0, changed.stderr);
    assert.match(changed.stdout, /TSFILE: .*\/dist\/greet\.js$/m);
    assert.equal(run(), 'hi you', 'the changed source is what runs');

    await rm(path.join(dir, 'src', 'old'), { recursive: true });
    const deleted = await build();
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.ok(!existsSync(path.join(dir, 'dist', 'old')), 'no stale dist/old/gone.js (nor its folder)');

    // A type error fails the build (so npm start does not start); run again with no change, it still fails.
    await src('main.ts', "import { greet } from './greet.js';\nconsole.log(greet(42));\n");
    for (let i = 0; i < 2; i++) {
      const broken = await build();
      assert.notEqual(broken.code, 0, `build ${i + 1} after the type error`);
      assert.match(broken.stdout + broken.stderr, /src\/main\.ts.*error TS2345/);
    }
  } finally {
    await ws.cleanup();
  }
});
