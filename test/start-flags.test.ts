/**
 * `npm start` and pm2 (ecosystem.config.cjs) run the daemon with the same Node flags: a heap
 * sized for a small machine (docs/BENCHMARKS.md, "Resident memory"). A flag only one of them
 * had would make the two ways of running the bot differ by ~100 MiB.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './helpers/child.js';

function startFlags(): string[] {
  const start = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
  assert.equal(start[0], 'node');
  assert.equal(start.at(-1), 'dist/main.js');
  return start.slice(1, -1);
}

test('npm start and pm2 give Node the same flags', () => {
  const { apps } = createRequire(import.meta.url)(path.join(repoRoot, 'ecosystem.config.cjs')) as { apps: Array<{ node_args?: string[] }> };
  assert.deepEqual(apps[0]!.node_args ?? [], startFlags());
});

test('with those flags Node caps the heap near 512 MiB and keeps the young generation small', () => {
  const out = execFileSync(process.execPath, [...startFlags(), '-e', "const v8 = require('v8'); console.log(JSON.stringify({ limit: v8.getHeapStatistics().heap_size_limit, young: v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size }))"], { encoding: 'utf8' });
  const { limit, young } = JSON.parse(out) as { limit: number; young: number };
  assert.ok(limit > 500 * 2 ** 20 && limit < 600 * 2 ** 20, `heap limit ${(limit / 2 ** 20).toFixed(0)} MiB`);
  assert.ok(young <= 4 * 2 ** 20, `new space ${(young / 2 ** 20).toFixed(1)} MiB`);
});
