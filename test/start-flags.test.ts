/**
 * `npm start` and pm2 (ecosystem.config.js) run the daemon with the same Node flags: a heap
 * sized for a small machine (docs/BENCHMARKS.md, "Resident memory"). A flag only one of them
 * had would make the two ways of running the bot differ by ~100 MiB. And `npm start` execs
 * Node, so a SIGTERM sent to npm (systemd, docker, a process manager) reaches the daemon.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './helpers/child.js';
import { ecosystemApps } from './helpers/ecosystem.js';
import { tempDir } from './helpers/workspace.js';
import { waitFor } from './helpers/wait.js';

function startScript(): string {
  return (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
}

function startFlags(): string[] {
  const start = startScript().split(/\s+/);
  assert.equal(start.shift(), 'exec');
  assert.equal(start[0], 'node');
  assert.equal(start.at(-1), 'dist/main.js');
  return start.slice(1, -1);
}

test('npm start and pm2 give Node the same flags', () => {
  assert.deepEqual(ecosystemApps()[0]!.node_args ?? [], startFlags());
});

test('with those flags Node caps the heap near 512 MiB and keeps the young generation small', () => {
  const out = execFileSync(
    process.execPath,
    [
      ...startFlags(),
      '-e',
      "const v8 = require('v8'); console.log(JSON.stringify({ limit: v8.getHeapStatistics().heap_size_limit, young: v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size }))",
    ],
    { encoding: 'utf8' },
  );
  const { limit, young } = JSON.parse(out) as { limit: number; young: number };
  assert.ok(limit > 500 * 2 ** 20 && limit < 600 * 2 ** 20, `heap limit ${(limit / 2 ** 20).toFixed(0)} MiB`);
  assert.ok(young <= 4 * 2 ** 20, `new space ${(young / 2 ** 20).toFixed(1)} MiB`);
});

test("npm start: a SIGTERM to the shell npm runs the script in reaches Node (Debian's sh would otherwise keep Node as its child and drop the signal)", async () => {
  // npm runs the start script with `sh -c` and forwards SIGTERM to that shell; here the script
  // runs the same way, with a stand-in for dist/main.js that records the signal.
  const ws = await tempDir();
  try {
    mkdirSync(path.join(ws.dir, 'dist'));
    const got = path.join(ws.dir, 'got-sigterm');
    writeFileSync(
      path.join(ws.dir, 'dist', 'main.js'),
      `process.on('SIGTERM', () => { require('fs').writeFileSync(${JSON.stringify(got)}, 'yes'); process.exit(0); }); console.log('ready ' + process.pid); setInterval(() => {}, 1000);`,
    );
    writeFileSync(path.join(ws.dir, 'package.json'), '{"type":"commonjs"}');
    const sh = spawn('/bin/sh', ['-c', startScript()], { cwd: ws.dir, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    sh.stdout!.on('data', (d: Buffer) => (out += d));
    await waitFor(() => out.includes('ready'), 10_000, 'the stand-in to start');
    sh.kill('SIGTERM');
    await once(sh, 'exit');
    try {
      assert.equal(readFileSync(got, 'utf8'), 'yes', 'Node got the SIGTERM');
    } finally {
      // Without exec the stand-in outlives the shell (and holds its pipe): end it either way.
      try {
        process.kill(Number(/ready (\d+)/.exec(out)?.[1]), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  } finally {
    await ws.cleanup();
  }
});
