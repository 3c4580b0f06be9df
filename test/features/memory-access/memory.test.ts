/**
 * The memory-facing commands: /memory shows MEMORY.md and the notes on disk, /new clears the
 * conversation but never the memory files, /status reports the size of the memory block.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../../helpers/app.js';
import { echoResponder, lastUserText, text, toolCalls, type Responder } from '../../helpers/fake-llm.js';

const memDir = (bot: TestBot, chatId: string): string => path.join(bot.workspace, 'memory', `test:${chatId}`);
const AT = new Date('2026-03-10T12:00:00Z');

async function snapshot(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const name of (await readdir(dir)).sort()) out.set(name, await readFile(path.join(dir, name)));
  return out;
}

test('/memory with nothing stored says memory is empty and notes are none yet', async () => {
  const bot = await startTestBot();
  try {
    const [reply] = await bot.send('1', '/memory');
    assert.match(reply!, /Long-term memory is empty/);
    assert.match(reply!, /Daily notes: none yet\./);
    assert.equal(bot.llm.chatRequests().length, 0, 'a command never reaches the model');
  } finally {
    await bot.close();
  }
});

test('/memory shows the MEMORY.md text and how many note files exist', async () => {
  const bot = await startTestBot();
  try {
    await mkdir(memDir(bot, '1'), { recursive: true });
    const memory = '## Preferences\n- likes green tea\n- answers in English\n';
    await writeFile(path.join(memDir(bot, '1'), 'MEMORY.md'), memory);
    await writeFile(path.join(memDir(bot, '1'), '2026-03-01.md'), '[10:00] User: a | Assistant: b\n');
    await writeFile(path.join(memDir(bot, '1'), '2026-03-04.md'), '[11:00] User: c | Assistant: d\n');
    // Not notes: history files and stray files are not counted.
    await writeFile(path.join(memDir(bot, '1'), 'HISTORY.md'), '## 2026-03-01T00:00:00.000Z\nx\n\n');
    await writeFile(path.join(memDir(bot, '1'), 'HISTORY-2026-03.md'), '## 2026-03-01T00:00:00.000Z\nx\n\n');

    const [reply] = await bot.send('1', '/memory');
    assert.ok(reply!.includes(memory.trim()), reply);
    assert.doesNotMatch(reply!, /empty/);
    assert.match(reply!, /Daily notes: 2 files, 62 B \(2026-03-01 … 2026-03-04\)\./);
  } finally {
    await bot.close();
  }
});

test('/memory counts the notes the bot writes itself', async () => {
  const bot = await startTestBot();
  try {
    await bot.send('1', 'hello', { receivedAt: AT });
    const [one] = await bot.send('1', '/memory');
    assert.match(one!, /Daily notes: 1 file, \d+ B \(2026-03-10 … 2026-03-10\)\./);
    await bot.send('1', 'next day', { receivedAt: new Date('2026-03-11T09:00:00Z') });
    const [two] = await bot.send('1', '/memory');
    assert.match(two!, /Daily notes: 2 files/);
  } finally {
    await bot.close();
  }
});

test('/new clears the session and keeps every memory file (byte-identical; history only appended to)', async () => {
  const bot = await startTestBot();
  try {
    await mkdir(memDir(bot, '1'), { recursive: true });
    await writeFile(path.join(memDir(bot, '1'), 'MEMORY.md'), '- the user is called Ada\n');
    await writeFile(path.join(memDir(bot, '1'), '2026-03-09.md'), '[10:00] User: yesterday | Assistant: ok\n');
    await writeFile(path.join(memDir(bot, '1'), 'HISTORY.md'), '## 2026-03-01T00:00:00.000Z\nearlier\n\n');
    await writeFile(path.join(memDir(bot, '1'), 'HISTORY-2026-03.md'), '## 2026-03-01T00:00:00.000Z\nearlier\n\n');
    await bot.send('1', 'hello', { receivedAt: AT });
    await bot.send('1', 'how are you', { receivedAt: AT });

    const sessionFile = path.join(bot.workspace, 'sessions', 'test:1.json');
    const before = JSON.parse(await readFile(sessionFile, 'utf8'));
    assert.equal(before.messages.length, 4);
    const memBefore = await snapshot(memDir(bot, '1'));
    assert.deepEqual([...memBefore.keys()], ['2026-03-09.md', '2026-03-10.md', 'HISTORY-2026-03.md', 'HISTORY.md', 'MEMORY.md']);

    const [reply] = await bot.send('1', '/new');
    assert.match(reply!, /Session cleared/);
    const after = JSON.parse(await readFile(sessionFile, 'utf8'));
    assert.equal(after.messages.length, 0);
    assert.notEqual(after.metadata.conversationId, before.metadata.conversationId);
    assert.match(after.metadata.conversationId, /^conv_/);
    assert.equal(after.id, before.id, 'same chat, same session file');
    assert.equal(bot.app.parts.sessions.get('test:1')?.messages.length ?? 0, 0, 'cleared in memory too');

    const memAfter = await snapshot(memDir(bot, '1'));
    for (const [name, bytes] of memBefore) {
      const now = memAfter.get(name);
      assert.ok(now, `${name} was deleted by /new`);
      if (name.startsWith('HISTORY')) {
        // A consolidation on /new (seed 002) may append an entry; nothing earlier may change.
        assert.ok(now.subarray(0, bytes.length).equals(bytes), `${name}: earlier history changed`);
      } else {
        assert.ok(now.equals(bytes), `${name} changed`);
      }
    }
    for (const name of memAfter.keys()) {
      if (!memBefore.has(name)) assert.match(name, /^HISTORY-\d{4}-\d{2}\.md$/, `/new created ${name}`);
    }

    // The next message starts a fresh conversation but still carries the memory.
    await bot.send('1', 'do you remember me?', { receivedAt: AT });
    const req = bot.llm.chatRequests().at(-1)!;
    // Besides the system prompt: this message's # Relevant Memory, then the message itself.
    const rest = req.body.messages.slice(1);
    assert.deepEqual(
      rest.filter((m: any) => m.role !== 'system').map((m: any) => m.content),
      ['do you remember me?'],
    );
    assert.ok(rest.filter((m: any) => m.role === 'system').every((m: any) => m.content.startsWith('# Relevant Memory\n')));
    assert.match(String(req.body.messages[0].content), /the user is called Ada/);
    assert.match(String(req.body.messages[0].content), /User: how are you/);
  } finally {
    await bot.close();
  }
});

test('/status shows the memory block size in tokens and its budget', async () => {
  const bot = await startTestBot();
  try {
    const [none] = await bot.send('1', '/status full');
    assert.doesNotMatch(none!, /Memory block:/, 'no turn yet, nothing to report');

    await bot.send('1', 'hello', { receivedAt: AT });
    const [empty] = await bot.send('1', '/status full');
    assert.match(empty!, /^Memory block: (0 tokens \(budget 12,500\)|empty( \(budget 12,500\))?)$/m);

    await mkdir(memDir(bot, '1'), { recursive: true });
    const memory = Array.from({ length: 20 }, (_, i) => `- fact ${i}: the user keeps ${i} beehives in Porto.`).join('\n');
    await writeFile(path.join(memDir(bot, '1'), 'MEMORY.md'), `${memory}\n`);
    await bot.send('1', 'again', { receivedAt: AT });
    const [status] = await bot.send('1', '/status full');
    const m = /^Memory block: ([\d,]+) tokens \(budget ([\d,]+)\)$/m.exec(status!);
    assert.ok(m, status);
    const tokens = Number(m[1]!.replace(/,/g, ''));
    const system = String(bot.llm.chatRequests().at(-1)!.body.messages[0].content);
    const block = system.slice(system.indexOf('# Memory'));
    assert.ok(block.includes(memory), 'the block sent carries MEMORY.md');
    assert.equal(tokens, bot.app.parts.models.defaultModel.tokens.countText(block), 'the count is the size of the block that was sent');
    assert.ok(tokens > 100, `${tokens}`);
    // Budget: 25% of min(gpt-4o-mini 128,000, compaction.maxContextTokens 50,000).
    assert.equal(m[2], '12,500');
    assert.doesNotMatch(status!, /Memory trimmed/);
  } finally {
    await bot.close();
  }
});

test('risk: /memory of a 1 MB MEMORY.md floods the chat — it shows the first ~3,500 characters, and /memory N shows the rest part by part', async () => {
  const bot = await startTestBot();
  try {
    await mkdir(memDir(bot, '1'), { recursive: true });
    const lines = Array.from({ length: 21_000 }, (_, i) => `- fact number ${String(i).padStart(5, '0')} about the garden and the bees`);
    const memory = `${lines.join('\n')}\n`;
    assert.ok(memory.length > 1_000_000);
    await writeFile(path.join(memDir(bot, '1'), 'MEMORY.md'), memory);

    const first = await bot.send('1', '/memory');
    assert.equal(first.length, 1, 'one reply');
    assert.ok(first[0]!.length <= 4_000, `${first[0]!.length} characters`);
    assert.ok(first[0]!.includes(lines[0]!));
    assert.match(first[0]!, /\/memory 2/, 'says how to see the rest');
    const parts = Number(/part 1 of (\d+)/.exec(first[0]!)?.[1]);
    assert.ok(parts > 250, first[0]!.slice(0, 200));

    const second = (await bot.send('1', '/memory 2'))[0]!;
    assert.ok(second.length <= 4_000);
    assert.match(second, /part 2 of \d+/);
    // The parts join up: the line after the last one of part 1 opens part 2.
    const lastShown = first[0]!
      .split('\n')
      .filter((l) => l.startsWith('- fact'))
      .at(-1)!;
    const next = lines[lines.indexOf(lastShown) + 1]!;
    assert.ok(second.includes(next), `part 2 starts with ${next}`);
    const last = (await bot.send('1', `/memory ${parts}`))[0]!;
    assert.ok(last.includes(lines.at(-1)!));
    assert.doesNotMatch(last, /for the next part/);
    assert.match((await bot.send('1', `/memory ${parts + 5}`))[0]!, new RegExp(`has ${parts} parts`));
  } finally {
    await bot.close();
  }
});

test("risk: facts saved with remember_fact are seen from Telegram only through /export — /memory shows the chat's facts; a corrected one and another chat's are not shown", async () => {
  // "remember <fact>" makes the model call remember_fact; the tool's result ends the turn.
  const responder: Responder = (req, i) => {
    if (req.body.messages.at(-1)?.role === 'tool') return text(`noted: ${req.body.messages.at(-1).content}`);
    const m = /^remember (.+)$/.exec(lastUserText(req));
    return m ? toolCalls([{ name: 'remember_fact', args: { fact: m[1] } }]) : echoResponder(req, i);
  };
  const bot = await startTestBot({ responder });
  try {
    const [saved] = await bot.send('1', 'remember Ada keeps her bees in Lisbon');
    await bot.send('1', 'remember The queen bee is called Beatrix');
    await bot.send('2', 'remember Bruno plays the cello');
    const id = /Saved as (fact_[0-9a-f]+)/.exec(saved!)![1]!;
    assert.ok(bot.app.parts.index.correctFact(id, 'test:1', 'Ada moved her bees to Porto'));

    const [reply] = await bot.send('1', '/memory');
    assert.match(reply!, /📌 Facts \(2 facts, newest first\):\n/);
    assert.match(reply!, /^- Ada moved her bees to Porto$/m);
    assert.match(reply!, /^- The queen bee is called Beatrix$/m);
    assert.doesNotMatch(reply!, /Lisbon/, 'the corrected fact is retired');
    assert.doesNotMatch(reply!, /cello/, "another chat's fact");
    assert.match(reply!, /Long-term memory is empty[\s\S]*📌 Facts[\s\S]*Daily notes:/, 'between MEMORY.md and the notes');
    const [other] = await bot.send('3', '/memory');
    assert.match(other!, /📌 Facts: none saved yet\./);
  } finally {
    await bot.close();
  }
});

test('risk: /memory with a long MEMORY.md and many facts outgrows one Telegram message — the facts take what part 1 leaves, /memory facts lists them all part by part', async () => {
  const bot = await startTestBot();
  try {
    await mkdir(memDir(bot, '1'), { recursive: true });
    await writeFile(
      path.join(memDir(bot, '1'), 'MEMORY.md'),
      Array.from({ length: 400 }, (_, i) => `- line ${i} of a long memory about the orchard`).join('\n'),
    );
    const facts = Array.from({ length: 300 }, (_, i) => `Crate c${i} is stored on shelf s${i}`);
    assert.equal(bot.app.parts.index.saveFacts(facts.map((content) => ({ content, scope: 'test:1' }))).length, 300);

    const [first] = await bot.send('1', '/memory');
    assert.ok(first!.length <= 4_000, `${first!.length} characters`);
    assert.match(first!, /part 1 of \d+/);
    assert.match(first!, /📌 Facts \(300 facts, newest first\):\n- Crate c\d+/);
    assert.match(first!, /… \d+ facts more: \/memory facts lists them all\.\n\nDaily notes:/);
    const [second] = await bot.send('1', '/memory 2');
    assert.doesNotMatch(second!, /📌/, 'the facts come with the first part only');

    const [part1] = await bot.send('1', '/memory facts');
    const parts = Number(/part 1 of (\d+)/.exec(part1!)?.[1]);
    assert.ok(parts >= 3, part1!.slice(0, 200));
    const listed: string[] = [];
    for (let n = 1; n <= parts; n++) {
      const [part] = await bot.send('1', `/memory facts ${n}`);
      assert.ok(part!.length <= 4_000, `part ${n}: ${part!.length} characters`);
      assert.match(part!, n < parts ? new RegExp(`Send /memory facts ${n + 1} for the next part`) : /^(?![\s\S]*next part)/);
      listed.push(
        ...part!
          .split('\n')
          .filter((l) => l.startsWith('- '))
          .map((l) => l.slice(2)),
      );
    }
    assert.deepEqual(listed.sort(), [...facts].sort(), 'every fact once, across the parts');
    assert.match((await bot.send('1', `/memory facts ${parts + 1}`))[0]!, new RegExp(`The facts fill ${parts} parts`));
  } finally {
    await bot.close();
  }
});
