/**
 * `.env` as a new user gets it: .env.example copied (where `npm run setup` starts from,
 * docs/operations.md), so it must agree with docs/configuration.md (TZ unset means the system's
 * zone), and an empty `TZ=` line must mean the same.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { mainTs, repoRoot, runToEnd, tsxLoader } from '../helpers/child.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { tempDir } from '../helpers/workspace.js';

/** The daemon on piped input, from `cwd` (its .env), with no TZ of its own in the environment. */
function runPiped(cwd: string, env: Record<string, string>, input: string) {
  const base: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR']) if (process.env[k]) base[k] = process.env[k]!;
  return runToEnd(process.execPath, ['--import', tsxLoader, mainTs], { cwd, env: { ...base, ...env }, input });
}

test('.env.example leaves TZ unset (the system zone, as docs/configuration.md says), as an example to uncomment', async () => {
  const example = await readFile(path.join(repoRoot, '.env.example'), 'utf8');
  assert.doesNotMatch(example, /^TZ=/m, 'no active TZ line');
  assert.match(example, /^# TZ=[A-Za-z_]+\/[A-Za-z_]+$/m, 'a commented example');
});

test('the documented copy of .env.example, and an empty TZ= line, start the daemon in the system zone', async () => {
  const llm = await startFakeLlm();
  const ws = await tempDir();
  try {
    await copyFile(path.join(repoRoot, '.env.example'), path.join(ws.dir, '.env'));
    const copied = await runPiped(ws.dir, { OPENAI_BASE_URL: llm.url }, 'hello\n');
    assert.equal(copied.code, 0, copied.stderr);
    assert.equal(copied.stdout, 'echo: hello\n');

    // Node turns TZ='' into "Etc/Unknown"; an empty line must mean "unset" like every other setting.
    await writeFile(path.join(ws.dir, '.env'), `TZ=\nOPENAI_BASE_URL=${llm.url}\nWORKSPACE_DIR=${ws.dir}/w\nLOG_LEVEL=info\n`);
    const empty = await runPiped(ws.dir, {}, 'hello\n');
    assert.equal(empty.code, 0, empty.stderr);
    assert.doesNotMatch(empty.stderr, /TZ=/);
    assert.equal(empty.stdout, 'echo: hello\n');
  } finally {
    await llm.close();
    await ws.cleanup();
  }
});
