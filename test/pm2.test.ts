/**
 * The pm2 line `npm run setup` ends with works on a fresh clone: one that never ran `npm start`
 * has no dist/ yet, and pm2 builds nothing (before, pm2 said "Script not found …/dist/main.js").
 * Run for real — the real pm2 (its own PM2_HOME in a temp folder), the ecosystem file the line
 * names, the project's build — on a copy of the project's setup whose src/main.ts is a stand-in
 * that records how pm2 started it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runSetup } from '../src/cli/setup.js';
import { childEnv, repoRoot, runToEnd } from './helpers/child.js';
import { echoResponder, startFakeLlm } from './helpers/fake-llm.js';

import { tempDir } from './helpers/workspace.js';
import { waitFor } from './helpers/wait.js';

test("setup's closing pm2 line starts the bot under pm2 on a clone that never ran npm start (from the ecosystem file, with npm start's Node flags, in the project folder)", {
  timeout: 240_000,
}, async () => {
  const ws = await tempDir('membot-pm2-');
  const llm = await startFakeLlm(echoResponder);
  const clone = path.join(ws.dir, 'clone');
  const env = childEnv({ PM2_HOME: path.join(ws.dir, 'pm2-home') });
  // The project's pm2, whatever the folder (npx elsewhere would look for pm2 on the registry).
  const pm2 = (...args: string[]) => runToEnd(path.join(repoRoot, 'node_modules', '.bin', 'pm2'), args, { env, cwd: ws.dir });
  try {
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
    const code = await runSetup({
      argv: ['--yes', '--no-telegram', '--llm-url', llm.url, '--model', 'fake-model', '--out', path.join(ws.dir, '.env')],
      env: {},
      cwd: ws.dir,
      io,
    });
    assert.equal(code, 0, lines.join('\n'));
    const hint = lines.find((l) => l.startsWith('Keep it running'));
    assert.ok(hint, lines.join('\n'));
    const steps = hint.slice(hint.indexOf(': ') + 2).split(' && ');
    const startAt = steps.findIndex((s) => s.startsWith('npx pm2 start '));
    assert.ok(startAt >= 0, hint);
    assert.deepEqual(steps.slice(startAt + 1), ['npx pm2 save', 'npx pm2 startup'], 'then saved for the next boot');
    const ecosystem = steps[startAt]!.split(' ').at(-1)!;

    // The clone: what git has (the build setup, the ecosystem file the line names), no dist/.
    await mkdir(path.join(clone, 'scripts'), { recursive: true });
    for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs', ecosystem])
      await copyFile(path.join(repoRoot, f), path.join(clone, f));
    symlinkSync(path.join(repoRoot, 'node_modules'), path.join(clone, 'node_modules'));
    await mkdir(path.join(clone, 'src'));
    await writeFile(
      path.join(clone, 'src', 'main.ts'),
      [
        "import { writeFileSync } from 'node:fs';",
        'const seen = { execArgv: process.execArgv, cwd: process.cwd(), underPm2: process.env.pm_id !== undefined };',
        "writeFileSync(new URL('../started.json', import.meta.url), JSON.stringify(seen));",
        'setInterval(() => undefined, 60_000);',
        '',
      ].join('\n'),
    );

    // The line up to `pm2 start` (save and startup would change this machine's boot), from the clone's folder.
    for (const step of steps.slice(0, startAt + 1)) {
      const run = await runToEnd('sh', ['-c', step], { env, cwd: clone });
      assert.equal(run.code, 0, `${step}:\n${run.stdout}${run.stderr}`);
    }
    const started = path.join(clone, 'started.json');
    // Written whole: the file can be seen before its bytes are (writeFileSync is not a rename).
    const written = () => existsSync(started) && readFileSync(started, 'utf8').endsWith('}');
    await waitFor(written, 60_000, 'the stand-in to be started by pm2').catch(async (err: Error) => {
      const logs = await pm2('logs', '--nostream', '--lines', '20');
      assert.fail(`${err.message}\n${logs.stdout}${logs.stderr}`);
    });
    const seen = JSON.parse(readFileSync(started, 'utf8')) as { execArgv: string[]; cwd: string; underPm2: boolean };
    assert.deepEqual(seen, { execArgv: ['--max-old-space-size=512', '--max-semi-space-size=2'], cwd: clone, underPm2: true });
  } finally {
    // pm2's daemon and the stand-in it runs end here, whatever happened above.
    const kill = await pm2('kill');
    assert.equal(kill.code, 0, kill.stdout + kill.stderr);
    await llm.close();
    await ws.cleanup();
  }
});
