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
import { echoResponder, lastUserText, promptKind, text, toolCalls, toolResults, type Responder } from '../helpers/fake-llm.js';
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
  assert.deepEqual(memoryEntries('# T\n\n-  The Cat is  Miso.\n* likes tea\n1. two\n## S\nplain line;\n'), [
    'the cat is miso',
    'likes tea',
    'two',
    'plain line',
  ]);
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
  const edited = `${FACTS.replace('green tea', 'black coffee')}- Ada has 3 hives.\n`;
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

/** Twenty entries that share no word, so the guard counts each one kept or dropped on its own. */
const TWENTY = [
  'Ada keeps bees',
  'Bruno plays cello',
  'Clara drinks matcha',
  'Dmitri sails catamarans',
  'Elif paints murals',
  'Farid bakes sourdough',
  'Greta climbs boulders',
  'Hiro collects stamps',
  'Ines grows orchids',
  'Jonas repairs clocks',
  'Kemal writes haiku',
  'Lena rides motorcycles',
  'Mateo brews kombucha',
  'Nadia knits sweaters',
  'Oskar builds drones',
  'Priya studies volcanoes',
  'Quentin juggles torches',
  'Rosa restores violins',
  'Sven fishes salmon',
  'Tamar dances tango',
];
const firstEntries = (n: number): string =>
  TWENTY.slice(0, n)
    .map((f) => `- ${f}.`)
    .join('\n');

/** A bot whose MEMORY.md holds the twenty entries; a chat message named in `calls` makes the model call those tools. */
function twentyBot(calls: Record<string, Array<{ name: string; args: unknown }>>): Promise<TestBot> {
  const responder: Responder = (req, i) => {
    if (promptKind(req) !== 'chat') return echoResponder(req, i);
    if (req.body.messages.at(-1)?.role === 'tool') return text('done');
    const asked = calls[lastUserText(req)];
    return asked ? toolCalls(asked) : echoResponder(req, i);
  };
  return startTestBot({
    responder,
    prepare: async (ws) => {
      await mkdir(path.join(ws, 'memory', 'test:1'), { recursive: true });
      await writeFile(path.join(ws, 'memory', 'test:1', 'MEMORY.md'), `${firstEntries(20)}\n`);
    },
  });
}

test('risk: MEMORY.md eroded within one turn — 8 memory_rewrite calls in one answer, each dropping at most 25 % of what the last left, keep 15 of 20 entries, not 3', async () => {
  // Each call keeps about three quarters of the one before: 20 → 15 → 12 → 9 → 7 → 6 → 5 → 4 → 3.
  const steps = [15, 12, 9, 7, 6, 5, 4, 3];
  const bot = await twentyBot({
    'tidy up': steps.map((n) => ({ name: 'memory_rewrite', args: { content: firstEntries(n) } })),
    'tidy a little': [{ name: 'memory_rewrite', args: { content: firstEntries(12) } }],
  });
  try {
    await bot.send('1', 'tidy up');
    const memory = await readFile(path.join(memDir(bot), 'MEMORY.md'), 'utf8');
    assert.equal(memoryEntries(memory).length, 15, memory);
    const results = toolResults(bot.llm.chatRequests().at(-1)!).map((r) => r.content);
    assert.equal(results.length, 8);
    assert.equal(results[0], 'MEMORY.md replaced.');
    for (const r of results.slice(1))
      assert.match(
        r,
        /^Refused: this rewrite would drop \d+ of the 20 entries MEMORY.md had when this turn began \(at most 25 % may go in one turn\); MEMORY\.md is unchanged\./,
      );
    const refusals = bot.logs.lines().filter((l) => l.code === 'memory.rewrite_refused');
    assert.equal(refusals.length, 7);
    assert.equal(refusals[0]!.since, 'turn start');

    // The next turn starts from the file as it then is: dropping 3 of its 15 passes.
    await bot.send('1', 'tidy a little');
    assert.equal(memoryEntries(await readFile(path.join(memDir(bot), 'MEMORY.md'), 'utf8')).length, 12);
  } finally {
    await bot.close();
  }
});

test("risk: entries added in the same turn pad the file so a rewrite's drops look small — the turn is judged against the file before its first memory_add", async () => {
  const padding = Array.from({ length: 10 }, (_, i) => ({
    name: 'memory_add',
    args: { fact: `Filler number ${['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'][i]} zzz${i}` },
  }));
  // Keeps the ten fillers and 14 of the 20: 6 of 30 entries now (20 %), but 6 of the 20 the turn began with (30 %).
  const keep = `${firstEntries(14)}\n${padding.map((p) => `- ${p.args.fact}`).join('\n')}`;
  const bot = await twentyBot({ 'pad and trim': [...padding, { name: 'memory_rewrite', args: { content: keep } }] });
  try {
    await bot.send('1', 'pad and trim');
    const results = toolResults(bot.llm.chatRequests().at(-1)!).map((r) => r.content);
    assert.match(results.at(-1)!, /^Refused: this rewrite would drop 6 of the 20 entries MEMORY.md had when this turn began/);
    const memory = await readFile(path.join(memDir(bot), 'MEMORY.md'), 'utf8');
    for (const f of TWENTY) assert.ok(memory.includes(f), `${f} kept`);
  } finally {
    await bot.close();
  }
});
