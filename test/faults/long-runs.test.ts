/**
 * Issue 11, "quadratic work on long runs": a reply, a tool argument or a MEMORY.md line of
 * 100,000+ spaces or letters made backtracking regexes and the tokenizer take seconds to
 * minutes on the one event loop, and every other chat waited. Each check here took minutes (or
 * tens of seconds) before; the bounds are generous (10 s, scaled by helpers/wait.ts) so a loaded
 * machine cannot fail them, and the measured figures are in docs/BENCHMARKS.md (`npm run bench --
 * longtext`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot } from '../helpers/app.js';
import { lastUserText, text } from '../helpers/fake-llm.js';
import { tempDir } from '../helpers/workspace.js';
import { extractEntities } from '../../src/index/store/entities.js';
import { parseConsolidation } from '../../src/memory/consolidation.js';
import { FileMemoryFiles } from '../../src/memory/file-memory.js';
import { patient } from '../helpers/wait.js';

const N = 200_000;
const BOUND_MS = patient(10_000);

function timed<T>(what: string, fn: () => T): T {
  const t0 = performance.now();
  const out = fn();
  const ms = performance.now() - t0;
  assert.ok(ms < BOUND_MS, `${what}: ${ms.toFixed(0)} ms`);
  return out;
}

async function timedAsync<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const out = await fn();
  const ms = performance.now() - t0;
  assert.ok(ms < BOUND_MS, `${what}: ${ms.toFixed(0)} ms`);
  return out;
}

test('risk: a 200,000-character answer and a 200,000-character MEMORY.md line make every other chat wait', async () => {
  // Each part was quadratic before: BPE on an unsplit run, the email regex, comparing every
  // entity with every other.
  const big = `${'a'.repeat(50_000)} ${' '.repeat(50_000)}x ${'a.'.repeat(25_000)}@ ${'x Anna, y Bob, '.repeat(3_300)}`;
  const bot = await startTestBot({
    responder: (req) => (lastUserText(req) === 'big' ? text(big) : { ...text('small answer'), delayMs: 200 }),
    // A model with room for all of it: the point is the time, not compaction.
    env: { LLM_MODEL: 'gpt-4.1' },
    runtimeConfig: { compaction: { maxContextTokens: 10_000_000 } },
    prepare: async (ws) => {
      const dir = path.join(ws, 'memory', 'test:A');
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, 'MEMORY.md'), `# Notes\n- ${'z'.repeat(N)}\n`);
    },
  });
  try {
    for (let round = 0; round < 2; round++) {
      // A's turn counts the MEMORY.md line, then stores, notes and indexes the answer (and in
      // round 2 counts it in the session); B waits on its model meanwhile.
      const a = bot.send('A', 'big');
      const b = await timedAsync(`chat B while chat A handles long text (round ${round + 1})`, () => bot.send('B', `hello ${round}`));
      assert.deepEqual(b, ['small answer']);
      const got = await a;
      assert.ok(got.length === 1 && got[0] === big, `chat A got its answer whole (got ${got.map((r) => r.slice(0, 80)).join(' | ')})`);
    }
  } finally {
    await bot.close();
  }
});

test('risk: entity extraction on 200,000 characters of email-like runs, names or dotted URLs freezes every chat', () => {
  timed('a run of "a." with an @ at the end', () => extractEntities(`${'a.'.repeat(N / 2)}@`));
  const names = timed('thousands of names', () => extractEntities('x Anna, y Bob, '.repeat(N / 15)));
  assert.deepEqual(
    names.map((e) => e.text),
    ['Anna', 'Bob'],
  );
  const url = timed('a URL ending in dots', () => extractEntities(`see http://x.org/${'.'.repeat(N)}a`));
  assert.equal(url[0]?.type, 'url');
  // Emails are found as before.
  assert.deepEqual(
    extractEntities('mail first.last+tag@sub.example.co.uk, .dot@example.com or x..y@example.org.')
      .filter((e) => e.type === 'email')
      .map((e) => e.text),
    ['first.last+tag@sub.example.co.uk', 'dot@example.com', 'x..y@example.org'],
  );
});

test('risk: a consolidation answer of 200,000 spaces or nested braces freezes every chat while it is parsed', () => {
  assert.equal(
    timed('spaces inside the answer', () => parseConsolidation(`{${' '.repeat(N)}x`)),
    null,
  );
  assert.deepEqual(
    timed('spaces after the JSON', () => parseConsolidation(`{"history_entry": "h"}${' '.repeat(N)}x`)),
    { historyEntry: 'h' },
  );
  assert.equal(
    timed('nested braces', () => parseConsolidation(`${'{'.repeat(N / 2)}${'}'.repeat(N / 2)}`)),
    null,
  );
  // Still parses what it parsed before.
  assert.deepEqual(parseConsolidation('```json\n{"history_entry": "h", "memory_update": "m"}\n```'), { historyEntry: 'h', memoryUpdate: 'm' });
});

test('risk: memory_add with 200,000 spaces, or notes_search over such a history entry, freezes every chat', async () => {
  const ws = await tempDir();
  try {
    const files = new FileMemoryFiles(ws.dir);
    await timedAsync('memory_add', () => files.appendMemory(`likes tea${' '.repeat(N)}\n and coffee`));
    assert.equal(await files.readMemory(), '- likes tea and coffee\n');
    await files.appendHistory(`[2026-01-01 10:00] talked about tea${' '.repeat(N)}x\n y`);
    const hits = await timedAsync('notes_search', () => files.search('tea'));
    assert.equal(hits[0]?.line.endsWith('x y'), true);
  } finally {
    await ws.cleanup();
  }
});
