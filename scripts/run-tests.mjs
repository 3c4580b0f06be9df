// Runs every test/**/*.test.ts with Node's own test runner (TypeScript through tsx).
// A small script because Node 20's --test does not expand globs itself.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...find(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const filter = process.argv.slice(2);
let files = find('test').sort();
if (filter.length) files = files.filter((f) => filter.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
// Two reporters on stdout: `spec` as before, and each file's duration with the slowest at the end.
const reporters = [
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  `--test-reporter=${fileURLToPath(new URL('test-durations.mjs', import.meta.url))}`,
  '--test-reporter-destination=stdout',
];
const res = spawnSync(process.execPath, ['--import', 'tsx', '--test', ...reporters, '--test-concurrency=2', ...files], {
  stdio: 'inherit',
  env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' },
});
process.exit(res.status ?? 1);
