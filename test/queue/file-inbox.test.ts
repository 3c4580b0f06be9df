/**
 * The inbox journal: the Inbox contract (inbox.contract.ts) against FileInbox, then the app's
 * recovery from the journal file: what an earlier run
 * accepted and did not finish is handled once at the next start, and recovery itself never
 * grows the journal — the daemon may be killed again while it recovers.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { argumentsHash } from '../../src/queue/inbox.js';
import { FileInbox } from '../../src/queue/file-inbox.js';
import { MAX_RECOVERY_ATTEMPTS } from '../../src/dispatch/intake.js';
import type { InboundMessage } from '../../src/core/message.js';
import { startTestBot, type TestBot } from '../helpers/app.js';
import { lastUserText, text } from '../helpers/fake-llm.js';
import { fileHarness } from '../helpers/stores.js';
import { inboxContract } from './inbox.contract.js';
import { textReply } from '../../src/core/channel.js';

describe('FileInbox meets the Inbox contract', () =>
  inboxContract(() =>
    fileHarness(
      async (dir) => new FileInbox(path.join(dir, 'inbox.jsonl')),
      (inbox) => inbox.shutdown(),
    ),
  ));

function message(chatId: string, words: string, messageId: string): InboundMessage {
  return { channel: 'test', chatId, userId: `u-${chatId}`, userName: 'Tester', text: words, messageId, receivedAt: new Date('2026-11-20T10:00:00Z') };
}

/** Leaves `msgs` in the journal as an earlier, killed run would: accepted, never done. */
async function leftOpen(file: string, msgs: InboundMessage[]): Promise<void> {
  const earlier = new FileInbox(file);
  for (const m of msgs) await earlier.accept(m).durable;
  await earlier.shutdown();
}

async function recover(bot: TestBot): Promise<Map<string, string[]>> {
  const replies = new Map<string, string[]>();
  await bot.app.recover((msg) =>
    textReply(async (reply) => {
      replies.set(msg.chatId, [...(replies.get(msg.chatId) ?? []), reply]);
    }),
  );
  return replies;
}

const journalIn = (workspace: string) => path.join(workspace, 'inbox.jsonl');
const inLines = (journal: string, words: string) => journal.split('\n').filter((l) => l.includes('"t":"in"') && l.includes(words)).length;

test('risk: every restart copies unfinished messages in the journal, so kills during recovery double it each time — recovery writes no copy', async () => {
  const bot = await startTestBot({
    responder: (req) => text(`echo: ${lastUserText(req)}`),
    prepare: (ws) => leftOpen(journalIn(ws), [message('1', 'first unfinished', '11'), message('2', 'second unfinished', '12')]),
  });
  try {
    const file = journalIn(bot.workspace);
    const replies = await recover(bot);
    assert.deepEqual(Object.fromEntries(replies), { '1': ['echo: first unfinished'], '2': ['echo: second unfinished'] });
    // Whenever a kill lands, the journal names each message once: nothing to multiply.
    const journal = await readFile(file, 'utf8');
    assert.equal(inLines(journal, 'first unfinished'), 1);
    assert.equal(inLines(journal, 'second unfinished'), 1);
    assert.deepEqual((await new FileInbox(file).unfinished()).entries, []);
  } finally {
    await bot.close();
  }
});

test('a journal holding copies of one message (older versions wrote them at each restart): handled once, every copy closed', async () => {
  const m = message('3', 'said once', '31');
  const line = (id: string) => `${JSON.stringify({ t: 'in', id, msg: { ...m, receivedAt: m.receivedAt.toISOString() } })}\n`;
  const bot = await startTestBot({
    responder: (req) => text(`echo: ${lastUserText(req)}`),
    prepare: (ws) => appendFile(journalIn(ws), line('aaaaaaaaaaaa') + line('bbbbbbbbbbbb') + line('cccccccccccc')),
  });
  try {
    const file = journalIn(bot.workspace);
    const replies = await recover(bot);
    assert.deepEqual(replies.get('3'), ['echo: said once']);
    assert.equal(bot.llm.requests.length, 1);
    assert.deepEqual((await new FileInbox(file).unfinished()).entries, []);
  } finally {
    await bot.close();
  }
});

test('a journal written before copies were recognised at accept: the open entries of one message are one, counting the starts of all; an open copy of a message closed is closed', async () => {
  const file = path.join(tmpdir(), `membot-inbox-copies-${process.pid}-${Date.now()}.jsonl`);
  const at = (m: InboundMessage, iso: string) => ({ ...m, receivedAt: iso });
  const x = message('13', 'kills the daemon', '131');
  const given = message('13', 'given up', '132');
  const lines = [
    { t: 'in', id: 'x1', msg: at(x, '2026-11-20T10:00:00.000Z') },
    { t: 'start', id: 'x1' },
    { t: 'in', id: 'g1', msg: at(given, '2026-11-20T10:00:01.000Z') },
    { t: 'start', id: 'g1' },
    { t: 'start', id: 'g1' },
    { t: 'start', id: 'g1' },
    { t: 'done', id: 'g1' },
    // Telegram sent both again after a kill; the copy of x was started in one more run.
    { t: 'in', id: 'x2', msg: at(x, '2026-11-20T10:05:00.000Z') },
    { t: 'in', id: 'g2', msg: at(given, '2026-11-20T10:05:00.000Z') },
    { t: 'start', id: 'x2' },
  ];
  try {
    await appendFile(file, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const inbox = new FileInbox(file);
    const { entries, duplicates } = await inbox.unfinished();
    assert.deepEqual(
      entries.map((e) => [e.id, e.attempt]),
      [['x1', 2]],
      "one entry for the message, counting both runs' starts: given up at this start",
    );
    assert.deepEqual(duplicates, ['x2', 'g2']);
    assert.equal(inbox.accept({ ...given, receivedAt: new Date() }).copyOf, 'g1', 'and a third copy, in this run, is known too');
    await inbox.shutdown();
  } finally {
    await rm(file, { force: true });
  }
});

test('risk: a message given up after restarts is run again through a copy Telegram sent (at the next start, or later in the run) — the model is not called for it, the user hears of it once', async () => {
  const poison = message('14', 'crashes the daemon', '141');
  const bot = await startTestBot({
    responder: (req) => text(`echo: ${lastUserText(req)}`),
    prepare: async (ws) => {
      const earlier = new FileInbox(journalIn(ws));
      const first = earlier.accept(poison);
      await first.durable;
      for (let i = 0; i < MAX_RECOVERY_ATTEMPTS; i++) await earlier.started(first.id);
      await earlier.shutdown();
      // Its copy: the update sent again after a kill that came before its id was recorded.
      await leftOpen(journalIn(ws), [{ ...poison, receivedAt: new Date(poison.receivedAt.getTime() + 5000) }]);
    },
  });
  try {
    const replies = await recover(bot);
    assert.equal(replies.get('14')?.length, 1, `the give-up line only: ${JSON.stringify(replies.get('14'))}`);
    assert.match(replies.get('14')![0]!, new RegExp(`failed ${MAX_RECOVERY_ATTEMPTS} times in a row`));
    // And once more, in this run.
    assert.deepEqual(await bot.send('14', poison.text, { messageId: poison.messageId }), [], 'no answer, no second give-up line');
    assert.equal(bot.llm.requests.length, 0, 'the model is never called for it');
    assert.deepEqual((await new FileInbox(journalIn(bot.workspace)).unfinished()).entries, [], 'every entry of it closed');
  } finally {
    await bot.close();
  }
});

test('risk: a message given up on after restarts mid-turn vanishes — it is saved in the session and the user is told; the LLM is not called for it', async () => {
  const bot = await startTestBot({
    responder: (req) => text(`echo: ${lastUserText(req)}`),
    prepare: async (ws) => {
      const earlier = new FileInbox(journalIn(ws));
      const poison = earlier.accept(message('4', 'crashes the daemon', '41'));
      const fine = earlier.accept(message('5', 'waited in its queue', '51'));
      await Promise.all([poison.durable, fine.durable]);
      await earlier.shutdown();
      // Starts of the first (each run died in its turn); the second never left its queue.
      for (let i = 0; i < MAX_RECOVERY_ATTEMPTS; i++) await appendFile(journalIn(ws), `${JSON.stringify({ t: 'start', id: poison.id })}\n`);
    },
  });
  try {
    const file = journalIn(bot.workspace);
    const replies = await recover(bot);
    assert.equal(replies.get('5')?.join(), 'echo: waited in its queue');
    assert.match(replies.get('4')?.join() ?? '', new RegExp(`failed ${MAX_RECOVERY_ATTEMPTS} times in a row .*saved; send it again`));
    assert.deepEqual(
      bot.llm.requests.map((r) => lastUserText(r)),
      ['waited in its queue'],
    );
    await bot.app.parts.sessions.flush();
    const session = JSON.parse(await readFile(path.join(bot.workspace, 'sessions', 'test:4.json'), 'utf8'));
    assert.deepEqual(
      session.messages.map((m: { content: string }) => m.content),
      ['crashes the daemon'],
    );
    assert.equal(bot.logs.lines().filter((l) => /did not finish after several restarts/.test(l.msg)).length, 1);
    assert.deepEqual((await new FileInbox(file).unfinished()).entries, []);
  } finally {
    await bot.close();
  }
});

test("risk: a new message that finishes before recovery has read a big journal empties it — the last run's unfinished message is lost", async () => {
  const bot = await startTestBot({
    responder: (req) => text(`echo: ${lastUserText(req)}`),
    // Over a megabyte of finished entries (the journal is emptied past that once nothing in
    // it is open), and one message the last run never finished.
    prepare: async (workspace) => {
      const file = journalIn(workspace);
      const filler = 'x'.repeat(1000);
      let lines = '';
      for (let i = 0; i < 1100; i++) {
        const id = `f${String(i).padStart(11, '0')}`;
        lines += `${JSON.stringify({ t: 'in', id, msg: { ...message('8', filler, String(i)), receivedAt: '2026-11-20T09:00:00.000Z' } })}\n${JSON.stringify({ t: 'done', id })}\n`;
      }
      await appendFile(file, lines);
      await leftOpen(file, [message('9', 'left from the last run', '91')]);
    },
  });
  try {
    // The channel is up before recovery starts; a new message may finish first.
    assert.deepEqual(await bot.send('10', 'a new message'), ['echo: a new message']);
    const replies = await recover(bot);
    assert.deepEqual(replies.get('9'), ['echo: left from the last run']);
  } finally {
    await bot.close();
  }
});

test('an unfinished message keeps counting its starts across restarts under its own id', async () => {
  const file = path.join(tmpdir(), `membot-inbox-${process.pid}-${Date.now()}.jsonl`);
  const first = new FileInbox(file);
  const { id } = first.accept(message('6', 'slow one', '61'));
  await first.started(id);
  await first.shutdown();
  const second = new FileInbox(file);
  const [entry] = (await second.unfinished()).entries;
  assert.equal(entry?.id, id);
  assert.equal(entry?.attempt, 1);
  second.adopt(id);
  await second.started(id);
  await second.shutdown();
  assert.equal((await new FileInbox(file).unfinished()).entries[0]?.attempt, 2);
  await rm(file, { force: true });
});

test('risk: a message that kills the daemon outside any tool call (in the model call, say) takes it down at every restart — run once more, then given up', async () => {
  const bot = await startTestBot({
    responder: (req) => text(`echo: ${lastUserText(req)}`),
    prepare: async (ws) => {
      const earlier = new FileInbox(journalIn(ws));
      const twice = earlier.accept(message('11', 'died in two runs', '111'));
      const once = earlier.accept(message('12', 'died in one run', '121'));
      await Promise.all([twice.durable, once.durable]);
      await earlier.shutdown();
      // No tool call marked: each run died elsewhere in its turn.
      const start = (id: string) => `${JSON.stringify({ t: 'start', id })}\n`;
      await appendFile(journalIn(ws), start(twice.id) + start(once.id) + start(twice.id));
    },
  });
  try {
    const replies = await recover(bot);
    assert.deepEqual(replies.get('12'), ['echo: died in one run'], 'one death: run again');
    assert.match(
      replies.get('11')?.join() ?? '',
      /^Answering your message failed 2 times in a row \(the bot restarted each time\), so I stopped trying\. It is saved/,
    );
    assert.deepEqual(
      bot.llm.requests.map((r) => lastUserText(r)),
      ['died in one run'],
      'a message that was running at two deaths is not run a third time',
    );
  } finally {
    await bot.close();
  }
});

test('a tool call still open when the process died is named in its entry, across restarts; a call that ended is not; only the hash of its arguments is written', async () => {
  const file = path.join(tmpdir(), `membot-inbox-calls-${process.pid}-${Date.now()}.jsonl`);
  try {
    const first = new FileInbox(file);
    const { id } = first.accept(message('7', 'look it up', '71'));
    await first.started(id);
    await first.callStarted(id, 'web__search', '{"q": "SECRETWORD", "n": 3}');
    await first.callEnded(id);
    await first.callStarted(id, 'web__fetch', '{"url":"https://example.org/SECRETWORD"}');
    await first.shutdown(); // killed during the second call
    const second = new FileInbox(file);
    const [entry] = (await second.unfinished()).entries;
    assert.deepEqual(entry?.interrupted, [{ tool: 'web__fetch', args: argumentsHash('{ "url": "https://example.org/SECRETWORD" }') }]);
    second.adopt(id);
    await second.started(id);
    await second.callStarted(id, 'memory_search', '{}');
    await second.shutdown(); // killed again, in another call
    const third = (await new FileInbox(file).unfinished()).entries[0];
    assert.deepEqual(
      third?.interrupted.map((c) => c.tool),
      ['web__fetch', 'memory_search'],
      "each run's interrupted call, oldest first",
    );
    assert.equal(third?.attempt, 2);
    const journal = await readFile(file, 'utf8');
    assert.equal(journal.split('SECRETWORD').length - 1, 0, 'the arguments themselves are not in the journal');
    assert.equal(
      argumentsHash('{"n":3,"q":"SECRETWORD"}'),
      argumentsHash('{"q": "SECRETWORD", "n": 3}'),
      'the same arguments hash the same whatever their order and spacing',
    );
  } finally {
    await rm(file, { force: true });
  }
});

test("an album's items close with its first item's entry: nothing of an answered album is left open for the next start", async () => {
  const file = path.join(tmpdir(), `inbox-album-${process.pid}-${Date.now()}.jsonl`);
  try {
    const inbox = new FileInbox(file);
    const ids: string[] = [];
    for (const n of ['1', '2', '3']) {
      const e = inbox.accept({ ...message('5', `[Photo] ${n}`, n), albumId: 'g' });
      await e.durable;
      ids.push(e.id);
    }
    await inbox.done(ids[0]!, ids.slice(1));
    await inbox.shutdown();
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    assert.deepEqual(
      lines.slice(3).map((l) => JSON.parse(l)),
      ids.map((id) => ({ t: 'done', id })),
      'the three done lines, together at the end',
    );
    assert.deepEqual((await new FileInbox(file).unfinished()).entries, []);
  } finally {
    await rm(file, { force: true });
  }
});
