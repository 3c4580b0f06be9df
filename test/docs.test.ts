/**
 * The README is a quick start a new user reads on one screen, the reference lives in docs/, and
 * they stay in step with the project: every link resolves, the test command is the one CI runs,
 * and one Node version is stated everywhere.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from './helpers/child.js';
import { ecosystemApps } from './helpers/ecosystem.js';
import { tempDir, testConfig } from './helpers/workspace.js';
import { createApp } from '../src/app/app.js';
import { silentLogger } from '../src/core/log.js';

const read = (rel: string) => readFile(path.join(repoRoot, rel), 'utf8');

test("the README's first screen is the quick start: BotFather, clone, npm ci, setup, start, pm2", async () => {
  const lines = (await read('README.md')).split('\n');
  const start = lines.indexOf('## Quick start');
  const end = lines.findIndex((l, i) => i > start && /^## /.test(l));
  assert.ok(start >= 0 && start < 8, 'the quick start comes first');
  assert.ok(end - start <= 60, `the quick start is ${end - start} lines`);
  const quick = lines.slice(start, end).join('\n');
  for (const step of [
    'Node.js 20.19',
    '@BotFather',
    '/newbot',
    'git clone',
    'npm ci',
    'npm run setup',
    'npm start',
    'npx pm2 start ecosystem.config.js',
    'npx pm2 save',
    'npx pm2 startup',
    'npm ci && npm test',
  ]) {
    assert.ok(quick.includes(step), `the quick start says ${step}`);
  }
  assert.ok(lines.length <= 80, `the README is ${lines.length} lines; the reference belongs in docs/`);
});

test('README states the test command CI runs, exactly', async () => {
  const ci = (await read('.ci/run')).split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
  assert.equal(ci.at(-1), 'npm ci && npm test');
  assert.match(await read('README.md'), /^npm ci && npm test$/m);
});

test('one Node version, 20.19 (where require() loads an ES module): package.json engines, the README, CI, and pm2 loads the ecosystem file on it', async () => {
  const pkg = JSON.parse(await read('package.json')) as { engines: { node: string }; devDependencies: Record<string, string> };
  assert.equal(pkg.engines.node, '>=20.19');
  const readme = await read('README.md');
  assert.match(readme, /Node\.js 20\.19 or newer/);
  assert.match(readme, /Node >= 20\.19/);
  const named = [
    ...(readme + (await read('ecosystem.config.js')) + (await read('docs/operations.md'))).matchAll(/Node(?:\.js)? (?:>= ?)?(\d+(?:\.\d+)?)/g),
  ].map((m) => m[1]);
  assert.deepEqual([...new Set(named)], ['20.19'], 'no other version named');
  assert.match(await read('.ci/run'), /engines\.node/, 'CI checks the running Node against engines');
  assert.match(pkg.devDependencies['@types/node']!, /^\^20\.19/, 'typed against the oldest Node it runs on');
  assert.ok(!existsSync(path.join(repoRoot, 'ecosystem.config.cjs')), 'one ecosystem file, the name the design card gives');
  // pm2 require()s the ecosystem file: an ES module, which this Node's require() loads.
  const apps = ecosystemApps();
  assert.equal(apps.length, 1);
  assert.deepEqual([apps[0]!.script, apps[0]!.cwd, apps[0]!.instances, apps[0]!.stop_exit_codes], ['dist/main.js', repoRoot, 1, [2]]);
});

test('every relative link of README.md and docs/*.md points to a file (and a heading) that exists', async () => {
  const files = ['README.md', ...(await readdir(path.join(repoRoot, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const broken: string[] = [];
  for (const file of files) {
    const text = await read(file);
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [rel, anchor] = target!.split('#') as [string, string | undefined];
      const dest = rel ? path.join(path.dirname(path.join(repoRoot, file)), rel) : path.join(repoRoot, file);
      if (!existsSync(dest)) {
        broken.push(`${file}: ${target}`);
        continue;
      }
      if (anchor && !(await headings(dest)).includes(anchor)) broken.push(`${file}: ${target} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

/** GitHub's anchors of a Markdown file's headings. */
async function headings(file: string): Promise<string[]> {
  if (!file.endsWith('.md')) return [];
  const text = await readFile(file, 'utf8');
  return [...text.matchAll(/^#{1,6} (.+)$/gm)].map(([, h]) =>
    h!
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-'),
  );
}

test("README's group table says what a member may and may not run, as the commands decide it", async () => {
  const ws = await tempDir();
  // No LLM is asked: the app is built only to read its commands' access.
  const app = await createApp(testConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', WORKSPACE_DIR: ws.dir }), silentLogger());
  try {
    const row = (await read('README.md')).split('\n').find((l) => l.startsWith('| other members |'));
    assert.ok(row, 'the README has the row for group members');
    const [may, mayNot] = row.split(' — not ') as [string, string];
    const named = (text: string) => [...text.matchAll(/`\/([a-z]+)(?: ([a-z]+))?`/g)].map((m) => ({ label: m[0], name: m[1]!, args: m[2] ?? '' }));
    const refusal = (c: { label: string; name: string; args: string }) => {
      const cmd = app.commands.find(c.name);
      assert.ok(cmd, `${c.label} is a command`);
      return app.commands.refusal(cmd, c.args, 'member');
    };
    assert.ok(named(may).length >= 4 && named(mayNot).length >= 7, 'the row names the commands on both sides');
    for (const c of named(may)) assert.equal(refusal(c), null, `${c.label}: the README says members may`);
    for (const c of named(mayNot)) assert.notEqual(refusal(c), null, `${c.label}: the README says members may not`);
  } finally {
    await app.stop();
    await ws.cleanup();
  }
});
