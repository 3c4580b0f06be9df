/**
 * Log lines: one component tag each (`[Upkeep] nightly jobs scheduled`, never `[Upkeep] [Upkeep] …`),
 * put there by componentLogger alone and matching the line's `component` field.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestBot } from '../helpers/app.js';
import { captureLog } from '../helpers/workspace.js';
import { componentLogger } from '../../src/core/log.js';

const TAG = /^\[([A-Za-z]+)\] /;

test("a running bot writes one component tag per log line, the same as the line's component field", async () => {
  const bot = await startTestBot({ appOptions: { scheduler: true } });
  try {
    await bot.send('1', 'hello');
    await bot.send('1', '/new');
    const lines = bot.logs.lines();
    assert.ok(
      lines.some((l) => /nightly jobs scheduled/.test(String(l.msg))),
      'the scheduler logged its start',
    );
    for (const l of lines) {
      const msg = String(l.msg ?? '');
      assert.ok(!/^\[[A-Za-z]+\] \[[A-Za-z]+\]/.test(msg), `two tags: ${msg}`);
      const tag = TAG.exec(msg)?.[1];
      if (tag) assert.equal(l.component, tag, `the tag of "${msg}" is its component`);
    }
    const tagged = lines.filter((l) => TAG.test(String(l.msg ?? ''))).map((l) => TAG.exec(String(l.msg))![1]);
    for (const t of ['Upkeep', 'Context', 'Pipeline', 'MemoryPersist'])
      assert.ok(tagged.includes(t), `a [${t}] line was logged: ${[...new Set(tagged)].join(', ')}`);
  } finally {
    await bot.close();
  }
});

test('componentLogger on a logger that already has a tag keeps one tag', () => {
  const logs = captureLog();
  componentLogger(componentLogger(logs.log, 'Telegram'), 'Pairing').info('code sent');
  assert.deepEqual(
    logs.lines().map((l) => l.msg),
    ['[Telegram] code sent'],
  );
});

test('no log call in src/ writes a tag by hand (componentLogger adds it)', async () => {
  const src = fileURLToPath(new URL('../../src', import.meta.url));
  const offenders: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (p.endsWith('.ts')) {
        const text = await readFile(p, 'utf8');
        for (const m of text.matchAll(/\.(?:trace|debug|info|warn|error|fatal)\((?:[^;]*?,\s*)?['"`]\[[A-Z][A-Za-z]*\] /g))
          offenders.push(`${path.relative(src, p)}: ${m[0]}`);
      }
    }
  };
  await walk(src);
  assert.deepEqual(offenders, []);
});
