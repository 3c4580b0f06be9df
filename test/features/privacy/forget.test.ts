/**
 * /forget on the real daemon (real files, real SQLite): the preview counts every place the
 * words are kept; /forget confirm removes them, and afterwards a byte search of the whole
 * workspace — memory.db and its WAL, old MEMORY.md versions, the session log and the inbox
 * journal included — finds the word nowhere, while everything else stays and the bot works on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../../helpers/app.js';
import { echoResponder, promptKind, text, type Responder } from '../../helpers/fake-llm.js';
import { Phrase } from '../../../src/features/privacy/forget.js';
import { IndexingService } from '../../../src/index/ingest.js';
import { filesContaining } from '../../helpers/workspace.js';
import { textReply } from '../../../src/core/channel.js';

const WORD = 'PAPAYA42';
const FACTS = '# Memory\n- The user is called Ada.\n- Ada keeps bees in Lisbon.\n';

const responder: Responder = (req, i) => {
  if (promptKind(req) !== 'consolidation') return echoResponder(req, i);
  return text(
    JSON.stringify({
      history_entry: `[2026-03-10 12:00] Ada said the secret word is ${WORD} and talked about bees.`,
      memory_update: `${FACTS}- The secret word is ${WORD}.\n`,
      facts: [`The secret word is ${WORD}.`, 'Ada keeps bees in Lisbon.'],
    }),
  );
};

async function seeded(): Promise<TestBot> {
  return startTestBot({
    responder,
    prepare: async (ws) => {
      await mkdir(path.join(ws, 'memory', 'test:1'), { recursive: true });
      await writeFile(path.join(ws, 'memory', 'test:1', 'MEMORY.md'), FACTS);
    },
  });
}

test('the words are matched case-insensitively across spaces', () => {
  const p = new Phrase('secret  WORD');
  assert.equal(p.test('the Secret\nword'), true);
  assert.equal(p.redact('a secret word, SECRET WORD.'), 'a [forgotten], [forgotten].');
});

test('/forget previews with counts; /forget confirm leaves no byte of the word in the workspace (memory.db included)', async () => {
  const bot = await seeded();
  try {
    await bot.send('1', `remember: the secret word is ${WORD}`);
    await bot.send('1', '/new'); // consolidation: MEMORY.md (a version), HISTORY, facts in the index
    await bot.send('1', `did you keep ${WORD.toLowerCase()}?`);
    await bot.send('2', 'hello from another chat');
    assert.ok((await bot.app.parts.reminders.schedule('test', '1', { at: new Date(Date.now() + 86_400_000).toISOString(), text: `say ${WORD}` })).ok);
    assert.ok((await bot.app.parts.reminders.schedule('test', '1', { at: new Date(Date.now() + 86_400_000).toISOString(), text: 'water the bees' })).ok);
    assert.ok((await filesContaining(bot.workspace, WORD)).length >= 8, 'the word is spread over the workspace before');

    const [preview] = await bot.send('1', `/forget ${WORD}`);
    assert.match(
      preview!,
      /^Found “PAPAYA42” in: 1 MEMORY\.md entry, 1 fact, 4 indexed messages, 2 daily-note lines, 1 history line, 2 messages in this conversation, 1 pending reminder\./,
    );
    assert.match(preview!, /Send \/forget confirm/);
    assert.ok((await filesContaining(bot.workspace, WORD)).length > 0, 'a preview changes nothing');

    const other = await readFile(path.join(bot.workspace, 'sessions', 'test:2.json'));
    const [done] = await bot.send('1', '/forget confirm');
    assert.match(
      done!,
      /^🗑 Forgot “PAPAYA42”\. Removed: 1 MEMORY\.md entry, 1 fact, 4 indexed messages, 2 daily-note lines, 1 history line, 2 messages in this conversation, 1 pending reminder \(MEMORY\.md saved as version #\d+\)\. Also taken out of \d+ lines? of older MEMORY\.md versions, the session log and the message journal\./,
    );

    assert.deepEqual(await filesContaining(bot.workspace, WORD), [], 'no byte of the word anywhere in the workspace');
    assert.equal((await stat(path.join(bot.workspace, 'memory.db-wal')).catch(() => ({ size: 0 }))).size, 0, 'the WAL was checkpointed and truncated');

    // Everything else stays: the other facts, the rest of the note lines, the other chat.
    const mem = await readFile(path.join(bot.workspace, 'memory', 'test:1', 'MEMORY.md'), 'utf8');
    assert.equal(mem, FACTS);
    const notes = (await readdir(path.join(bot.workspace, 'memory', 'test:1'))).filter((n) => /^\d{4}-\d\d-\d\d\.md$/.test(n));
    const noteText = (await Promise.all(notes.map((n) => readFile(path.join(bot.workspace, 'memory', 'test:1', n), 'utf8')))).join('');
    assert.match(noteText, /User: remember: the secret word is \[forgotten\]/);
    assert.deepEqual(await readFile(path.join(bot.workspace, 'sessions', 'test:2.json')), other, 'another chat is not touched');
    const hits = bot.app.parts.index.search('bees Lisbon', { scope: 'test:1', limit: 5 });
    assert.ok(
      hits.some((h) => h.kind === 'fact' && /Lisbon/.test(h.content)),
      'the other fact is still found',
    );

    assert.deepEqual(
      (await bot.app.parts.reminders.list('test', '1')).map((r) => r.text),
      ['water the bees'],
      'the other reminder stays',
    );

    // The bot works on, with memory.db still in use.
    const [reply] = await bot.send('1', 'what do you know?');
    assert.equal(reply, 'echo: what do you know?');
    assert.doesNotMatch(JSON.stringify(bot.llm.chatRequests().at(-1)!.body), /papaya42/i, 'nothing of the word reaches the next prompt');
  } finally {
    await bot.close();
  }
});

test('/forget with nothing matching, without words, confirm without a request, and cancel', async () => {
  const bot = await seeded();
  try {
    const [none] = await bot.send('1', '/forget MANGO77');
    assert.equal(none, "Nothing in this chat's memory contains “MANGO77”; nothing to forget.");
    assert.deepEqual(await filesContaining(bot.workspace, 'MANGO77'), [], 'the request itself is taken out of the journal');
    assert.match((await bot.send('1', '/forget'))[0]!, /^Tell me what to forget/);
    assert.match((await bot.send('1', '/forget confirm'))[0]!, /^Nothing to confirm/);
    assert.match((await bot.send('1', '/forget Ada'))[0]!, /^Found “Ada” in: 2 MEMORY\.md entries\./);
    assert.equal((await bot.send('1', '/forget cancel'))[0], 'Cancelled: nothing was forgotten.');
    assert.match((await bot.send('1', '/forget confirm'))[0]!, /^Nothing to confirm/);
    assert.equal(await readFile(path.join(bot.workspace, 'memory', 'test:1', 'MEMORY.md'), 'utf8'), FACTS);
  } finally {
    await bot.close();
  }
});

test("a /forget confirmed while another chat's scrub runs also takes what was held for memory.db meanwhile", async () => {
  const bot = await seeded();
  try {
    const index = bot.app.parts.index;
    const scope = bot.app.parts.memory.scopeKey('test', '1');
    // Another chat with a long history, so that its scrub is still running when chat 1 confirms.
    const ingest = new IndexingService(index);
    for (let i = 0; i < 4_000; i++)
      ingest.ingestMessage({
        content: `bees and honey and hives, entry ${i}`,
        role: 'user',
        sessionId: 'other',
        scope: 'test:9',
        eventTime: new Date(Date.UTC(2026, 0, 1) + i * 60_000),
      });
    await bot.send('1', `remember: the secret word is ${WORD}`);
    const [preview] = await bot.send('1', `/forget ${WORD}`);
    assert.match(preview!, /Send \/forget confirm/);
    const otherScrub = index.scrubFreedSpace();
    // A message of chat 1 arriving during that scrub: held for memory.db, not written yet.
    assert.equal(ingest.ingestMessage({ content: `my locker code is ${WORD}`, role: 'user', sessionId: 's1', scope, eventTime: new Date() }), null);
    const [done] = await bot.send('1', '/forget confirm');
    await otherScrub;
    assert.doesNotMatch(done!, /could not|failed/i, done);
    assert.deepEqual(
      index.search(WORD, { scope, limit: 5 }).map((r) => r.content),
      [],
      'the held message was written, then forgotten',
    );
    assert.deepEqual(
      (await filesContaining(bot.workspace, WORD)).filter((f) => f.startsWith('memory.db')),
      [],
    );
  } finally {
    await bot.close();
  }
});

test('a forget left by earlier runs: one cut off in two runs is given up and its chat told to ask again; one from the memory page is finished and only logged; no record is left', async () => {
  const counts = { memoryEntries: 1, facts: 0, indexedMessages: 0, noteLines: 0, historyLines: 0, sessionMessages: 0, reminders: 0 };
  const bot = await startTestBot({
    prepare: async (ws) => {
      await mkdir(path.join(ws, 'memory', 'test:1'), { recursive: true });
      await writeFile(path.join(ws, 'memory', 'test:1', 'MEMORY.md'), `${FACTS}- The secret word is ${WORD}.\n`);
      await mkdir(path.join(ws, 'forgetting'), { recursive: true });
      // Begun, then cut off, then taken up once more and cut off again: not a third time.
      await writeFile(
        path.join(ws, 'forgetting', 'aaaaaaaaaaaa.json'),
        JSON.stringify({ channel: 'test', chatId: '2', words: 'MANGO77', notify: true, counts, attempt: 2 }),
      );
      // The memory page's, cut off once.
      await writeFile(
        path.join(ws, 'forgetting', 'bbbbbbbbbbbb.json'),
        JSON.stringify({ channel: 'test', chatId: '1', words: WORD, notify: false, counts, attempt: 1 }),
      );
    },
  });
  try {
    const told: Array<[string, string]> = [];
    await bot.app.recover(() => textReply(async () => undefined), { test: async (chatId, text) => void told.push([chatId, text]) });
    assert.deepEqual(told, [
      [
        '2',
        '⚠️ Your /forget confirm was cut off by a restart of the bot twice, so I stopped: what you asked to forget may still be kept. Send /forget <words> again, then /forget confirm.',
      ],
    ]);
    assert.equal(await readFile(path.join(bot.workspace, 'memory', 'test:1', 'MEMORY.md'), 'utf8'), FACTS, "the page's forget was finished");
    assert.deepEqual(await filesContaining(bot.workspace, WORD), []);
    assert.deepEqual(await filesContaining(bot.workspace, 'MANGO77'), [], 'a given-up record keeps no words either');
    assert.deepEqual(await readdir(path.join(bot.workspace, 'forgetting')), []);
    assert.ok(bot.logs.lines().some((l) => /a \/forget did not finish in several runs in a row; given up/.test(l.msg)));
  } finally {
    await bot.close();
  }
});
