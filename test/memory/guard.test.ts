/**
 * The rewrite guard (src/memory/guard.ts) on the real daemon: the fake LLM answers the /new
 * consolidation with a memory_update that leaves the old facts out → MEMORY.md keeps them, the
 * history entry is still written, the refusal is logged once with its code, /status counts it.
 * A legitimate edit passes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../helpers/app.js';
import { echoResponder, promptKind, text, type Responder } from '../helpers/fake-llm.js';
import { checkRewrite, memoryEntries, MAX_DROP, MAX_DROP_COMPRESSION } from '../../src/memory/guard.js';

const FACTS = '# Memory\n- The secret word is PAPAYA42.\n- The user is called Ada.\n- Ada keeps bees in Lisbon.\n- Ada drinks green tea.\n';
const memDir = (bot: TestBot): string => path.join(bot.workspace, 'memory', 'test:1');

function consolidationAnswer(memoryUpdate: string): Responder {
  return (req, i) =>
    promptKind(req) === 'consolidation'
      ? text(JSON.stringify({ history_entry: '[2026-03-10 12:00] Ada talked about her bees.', memory_update: memoryUpdate, facts: [] }))
      : echoResponder(req, i);
}

async function seeded(responder: Responder): Promise<TestBot> {
  return startTestBot({
    responder,
    prepare: async (ws) => {
      await mkdir(path.join(ws, 'memory', 'test:1'), { recursive: true });
      await writeFile(path.join(ws, 'memory', 'test:1', 'MEMORY.md'), FACTS);
    },
  });
}

test('entries are lines and bullets, normalized; headings and blank lines are not entries', () => {
  assert.deepEqual(memoryEntries('# T\n\n-  The Cat is  Miso.\n* likes tea\n1. two\n## S\nplain line;\n'), ['the cat is miso', 'likes tea', 'two', 'plain line']);
});

test('the guard: adding and editing pass; dropping more than 25 % (50 % for compression) is refused', () => {
  assert.equal(checkRewrite(FACTS, `${FACTS}- Ada likes jazz.\n`, MAX_DROP).ok, true, 'adding');
  assert.equal(checkRewrite(FACTS, FACTS.replace('green tea', 'black coffee').replace('Lisbon', 'Porto'), MAX_DROP).ok, true, 'editing values');
  const one = checkRewrite(FACTS, '- The user is called Ada.\n', MAX_DROP);
  assert.deepEqual(one, { ok: false, prior: 4, dropped: 3, maxDrop: 0.25 });
  const halfGone = '- The secret word is PAPAYA42.\n- The user is called Ada.\n';
  assert.equal(checkRewrite(FACTS, halfGone, MAX_DROP).ok, false);
  assert.equal(checkRewrite(FACTS, halfGone, MAX_DROP_COMPRESSION).ok, true, 'compression may drop half');
  assert.equal(checkRewrite('', 'anything', MAX_DROP).ok, true, 'an empty file can be written');
});

test('a destructive memory_update at /new is refused: facts kept, history written, refusal logged once, /status counts it', async () => {
  const bot = await seeded(consolidationAnswer('# Memory\n- The user likes bees.'));
  try {
    await bot.send('1', 'my bees are fine');
    const [cleared] = await bot.send('1', '/new');
    assert.equal(cleared, 'Session cleared.');
    assert.equal(await readFile(path.join(memDir(bot), 'MEMORY.md'), 'utf8'), FACTS, 'MEMORY.md keeps every fact');
    assert.match(await readFile(path.join(memDir(bot), 'HISTORY.md'), 'utf8'), /Ada talked about her bees\./, 'the history entry is still written');
    const refusals = bot.logs.lines().filter((l) => l.code === 'memory.rewrite_refused');
    assert.equal(refusals.length, 1, 'logged once');
    assert.equal(refusals[0]!.source, 'consolidation');
    assert.equal(refusals[0]!.dropped, 4);
    const [status] = await bot.send('1', '/status full');
    assert.match(status!, /Memory rewrites refused: 1 \(last .* consolidation: would have dropped 4 of 4 entries\)/);
    // The prompt of the next turn still carries the secret word.
    await bot.send('1', 'what is the secret word?');
    const last = bot.llm.chatRequests().at(-1)!;
    assert.match(String(last.body.messages[0].content), /PAPAYA42/);
  } finally {
    await bot.close();
  }
});

test('a legitimate memory_update (an edit and an addition) passes and is kept as a version', async () => {
  const edited = FACTS.replace('green tea', 'black coffee') + '- Ada has 3 hives.\n';
  const bot = await seeded(consolidationAnswer(edited));
  try {
    await bot.send('1', 'I switched to black coffee and I have 3 hives now');
    await bot.send('1', '/new');
    assert.equal(await readFile(path.join(memDir(bot), 'MEMORY.md'), 'utf8'), edited);
    assert.equal(bot.logs.lines().filter((l) => l.code === 'memory.rewrite_refused').length, 0);
    const [status] = await bot.send('1', '/status full');
    assert.match(status!, /Memory rewrites refused: 0/);
  } finally {
    await bot.close();
  }
});
