/**
 * What every SessionStore (src/sessions/store.ts) must do, whatever keeps the sessions: run by
 * file-store.test.ts against FileSessionStore; another implementation adds one call. What a
 * caller relies on: a change the writer reports done survives a kill, in order; a replay never
 * brings back what /new or a compaction removed; one session object per chat; the last run's
 * log for what derives from it; words taken out of a chat's log lines stay out.
 */
import assert from 'node:assert/strict';
import { makeMessage, type CompactionRecord, type SessionMessage } from '../../src/sessions/model.js';
import type { SessionStore } from '../../src/sessions/store.js';
import type { SessionItem } from '../../src/sessions/portable.js';
import { collect, type Portable } from '../../src/storage/portable.js';
import type { InboundMessage } from '../../src/core/message.js';
import { contractTest, type StoreHarness } from '../helpers/stores.js';

const texts = (messages: readonly SessionMessage[]): string[] => messages.map((m) => m.content);
const plain = <T>(v: T): T => JSON.parse(JSON.stringify(v));

function inbound(text: string, messageId: string, chatId = 'k'): InboundMessage {
  return { channel: 'test', chatId, userId: 'u1', userName: 'Ann', text, messageId, receivedAt: new Date('2026-03-01T09:30:00Z') };
}

/** A store under the contract: the sessions store, and its side of a move between files and PostgreSQL. */
export type PortableSessions = SessionStore & Portable<SessionItem>;

/** Items in one order whatever order a store gives them in (each store lists its own way). */
export const sorted = (items: SessionItem[]): SessionItem[] => [...items].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));

/** Items a move may bring that no writer makes: a session file written by hand (its own spacing), one set aside as damaged, a log line it holds. */
export const handMade: SessionItem[] = [
  {
    kind: 'session',
    channel: 'telegram',
    chatId: '-100:7',
    text: '{ "messages": [ {"id": "m1", "role": "user", "content": "by hand \\u00e9 é", "timestamp": "2026-01-01T00:00:00.000Z"} ],\n  "metadata": {"conversationId": "conv_hand", "messagesReceived": 1, "messagesCompacted": 0}, "walSeq": 5 }\n',
  },
  { kind: 'damaged', channel: 'telegram', chatId: '-100:7', at: '1767225600000', text: 'not json{ \u0001 ünï' },
  {
    kind: 'log',
    channel: 'telegram',
    chatId: '-100:7',
    text: JSON.stringify({ seq: 5, channelType: 'telegram', chatId: '-100:7', conversation: 'conv_hand', messages: [makeMessage('assistant', 'logged')] }),
  },
];

export function sessionStoreContract(make: () => Promise<StoreHarness<PortableSessions>>): void {
  const it = contractTest(make);

  it('a chat never seen starts empty under its own id, and is one session object however often (and at once) it is asked for', async ({ store }) => {
    const [a, b] = await Promise.all([store.getOrCreate('test', '1'), store.getOrCreate('test', '1')]);
    assert.equal(a, b);
    assert.equal(await store.getOrCreate('test', '1'), a);
    assert.deepEqual([a.id, a.channelType, a.chatId, a.state, a.messages], ['test:1', 'test', '1', 'ACTIVE', []]);
    assert.ok(a.metadata.conversationId);
    assert.notEqual(await store.getOrCreate('test', '2'), a);
    assert.notEqual(await store.getOrCreate('other', '1'), a);
  });

  it("appended messages come back whole and in order after a clean restart, with the chat's model and counts", async (h) => {
    const s = await h.store.getOrCreate('test', '7');
    const w = h.store.writer(s);
    w.receive(inbound('héllo "quoted" \n newline 😀', '17', '7'));
    await w.commit();
    await w.append(makeMessage('assistant', '', { toolCalls: [{ id: 'call_1', name: 'get_current_time', arguments: '{"tz":"UTC"}' }] }));
    await w.append(makeMessage('tool', '12:00', { toolCallId: 'call_1', toolName: 'get_current_time' }));
    await w.append(makeMessage('assistant', 'It is noon.'));
    await w.setModel('small-model');
    const expected = plain(s.messages);
    await h.store.close();

    const again = await h.reopen();
    const back = await again.getOrCreate('test', '7');
    assert.deepEqual(plain(back.messages), expected);
    assert.equal(back.messages[0]!.senderName, 'Ann');
    assert.deepEqual([back.metadata.model, back.metadata.messagesReceived, back.metadata.conversationId], ['small-model', 1, s.metadata.conversationId]);
    await again.close();
  });

  it('a change the writer reports done survives a kill: recorded then committed, and appended, messages are there at the next start', async (h) => {
    const s = await h.store.getOrCreate('test', 'k');
    const w = h.store.writer(s);
    w.record(makeMessage('user', 'remind me at noon'));
    await w.commit();
    await w.append(makeMessage('assistant', 'will do'));
    w.record(makeMessage('user', 'and my locker code is 4711'));
    await w.append(makeMessage('assistant', 'noted'));

    const after = await h.crash();
    assert.deepEqual(texts((await after.getOrCreate('test', 'k')).messages), ['remind me at noon', 'will do', 'and my locker code is 4711', 'noted']);
    // A second start after that one restores nothing twice.
    const again = await h.crash();
    assert.equal((await again.getOrCreate('test', 'k')).messages.length, 4);
  });

  it('what /new cleared never comes back after a kill, and /new starts a new conversation', async (h) => {
    const s = await h.store.getOrCreate('test', 'k');
    const w = h.store.writer(s);
    await w.append(makeMessage('user', 'old one'));
    await w.append(makeMessage('assistant', 'old answer'));
    const before = s.metadata.conversationId;
    await w.clear();
    assert.deepEqual(s.messages, []);
    assert.notEqual(s.metadata.conversationId, before);
    await w.append(makeMessage('user', 'fresh start'));

    const after = await h.crash();
    const back = await after.getOrCreate('test', 'k');
    assert.deepEqual(texts(back.messages), ['fresh start']);
    assert.equal(back.metadata.conversationId, s.metadata.conversationId);
  });

  it("a compaction's replace is what the next start finds, with its record; what it dropped does not come back", async (h) => {
    const s = await h.store.getOrCreate('test', 'k');
    const w = h.store.writer(s);
    for (const t of ['a', 'b', 'c', 'd']) await w.append(makeMessage('user', t));
    const record: CompactionRecord = { at: '2026-03-01T10:00:00.000Z', kind: 'summary', removed: 3, kept: 1 };
    await w.replace([makeMessage('system', 'summary of a, b, c'), s.messages[3]!], record);
    // Recorded, then dropped by the next replace before any commit: the next log line must not carry it.
    const dropped = makeMessage('user', 'flagged by the compaction');
    w.record(dropped);
    await w.replace(s.messages.filter((m) => m !== dropped));
    await w.append(makeMessage('assistant', 'e'));

    const after = await h.crash();
    const back = await after.getOrCreate('test', 'k');
    assert.deepEqual(texts(back.messages), ['summary of a, b, c', 'd', 'e']);
    assert.equal(back.metadata.messagesCompacted, 3);
    assert.deepEqual(back.metadata.lastCompaction, record);
  });

  it('replace, given the copy it worked from, keeps what was added since — after the new list', async (h) => {
    const s = await h.store.getOrCreate('test', 'k');
    const w = h.store.writer(s);
    for (const t of ['one', 'two', 'three']) await w.append(makeMessage('user', t));
    const copy = [...s.messages];
    // While the compaction waits for its summary, a /stop leaves its marker.
    await w.append(makeMessage('assistant', 'stopped', { stopped: true }));
    await w.replace([makeMessage('system', 'summary'), copy[2]!], undefined, copy);
    assert.deepEqual(texts(s.messages), ['summary', 'three', 'stopped']);

    const after = await h.crash();
    assert.deepEqual(texts((await after.getOrCreate('test', 'k')).messages), ['summary', 'three', 'stopped']);
  });

  it('revise gives a message its final text, whether still owed or already durable, and a kill keeps that text', async (h) => {
    const s = await h.store.getOrCreate('test', 'k');
    const w = h.store.writer(s);
    const voice = makeMessage('user', '[voice note]');
    w.record(voice);
    await w.revise(voice, 'the transcript');
    await w.commit();
    const photo = makeMessage('user', '[photo]');
    await w.append(photo);
    await w.revise(photo, 'a photo the model could not see');

    const after = await h.crash();
    assert.deepEqual(texts((await after.getOrCreate('test', 'k')).messages), ['the transcript', 'a photo the model could not see']);
  });

  it('receive records a message once, finds it again when it is redelivered, and knows once it is answered — after a kill too', async (h) => {
    const s = await h.store.getOrCreate('test', 'k');
    const w = h.store.writer(s);
    const msg = inbound('hello', '7');
    const first = w.receive(msg);
    assert.deepEqual([first.fresh, first.answered, s.metadata.messagesReceived], [true, false, 1]);
    assert.equal(first.message.timestamp, '2026-03-01T09:30:00.000Z', 'the time the channel received it');
    assert.equal(w.receive({ ...msg }).message, first.message);
    assert.equal(s.metadata.messagesReceived, 1, 'counted once');
    await w.commit();

    const after = await h.crash();
    const w2 = after.writer(await after.getOrCreate('test', 'k'));
    const again = w2.receive({ ...msg });
    assert.deepEqual([again.fresh, again.answered, again.passed, again.message.content], [false, false, false, 'hello']);
    await w2.append(makeMessage('assistant', 'hi'));
    assert.equal(w2.receive({ ...msg }).answered, true);
    assert.equal(w2.receive({ ...msg, messageId: '8' }).fresh, true, 'another message id is another message');
  });

  it('receive: a message the chat moved on from unanswered (a later user message follows it) is passed — a copy of it is not answered', async (h) => {
    const w = h.store.writer(await h.store.getOrCreate('test', 'k'));
    const given = inbound('given up', '1');
    w.receive(given);
    w.receive(inbound('a later one', '2'));
    await w.commit();
    const after = await h.crash();
    const copy = after.writer(await after.getOrCreate('test', 'k')).receive({ ...given });
    assert.deepEqual([copy.fresh, copy.answered, copy.passed], [false, false, true]);
  });

  it('chats never share a session, whatever their ids look like', async (h) => {
    const chats: Array<[string, string]> = [
      ['console', '../../etc/x'],
      ['console', 'a/b'],
      ['console', '..'],
      ['console', ''],
      ['telegram', '-100123:7'],
      ['telegram', 'ünï 🐝'],
      ['test', '1'],
      ['other', '1'],
    ];
    for (const [channel, chatId] of chats)
      await h.store.writer(await h.store.getOrCreate(channel, chatId)).append(makeMessage('user', `from ${channel} ${chatId}`));

    const after = await h.crash();
    for (const [channel, chatId] of chats) {
      const s = await after.getOrCreate(channel, chatId);
      assert.deepEqual([s.channelType, s.chatId, texts(s.messages)], [channel, chatId, [`from ${channel} ${chatId}`]]);
    }
  });

  it('appends from two writers of one session at once all land, in the order they were made', async (h) => {
    const s = await h.store.getOrCreate('test', 'k');
    const [a, b] = [h.store.writer(s), h.store.writer(s)];
    const want = Array.from({ length: 20 }, (_, i) => `m${i}`);
    await Promise.all(want.map((t, i) => (i % 2 ? a : b).append(makeMessage('user', t))));
    assert.deepEqual(texts(s.messages), want);

    const after = await h.crash();
    assert.deepEqual(texts((await after.getOrCreate('test', 'k')).messages), want);
  });

  it("after a kill, the last run's log gives the committed messages once, with their chat and conversation; once forgotten, no start gives them again", async (h) => {
    const s = await h.store.getOrCreate('test', 'k');
    const w = h.store.writer(s);
    w.record(makeMessage('user', 'question'));
    await w.append(makeMessage('assistant', 'answer'));
    await h.store.writer(await h.store.getOrCreate('test', 'other')).append(makeMessage('user', 'elsewhere'));

    const after = await h.crash();
    const lines = after.takeLastRun();
    const mine = lines.filter((l) => l.channelType === 'test' && l.chatId === 'k');
    assert.deepEqual(texts(mine.flatMap((l) => l.messages)), ['question', 'answer']);
    assert.ok(mine.every((l) => l.conversation === s.metadata.conversationId));
    assert.deepEqual(
      lines.map((l) => l.seq),
      [...lines.map((l) => l.seq)].sort((x, y) => x - y),
      'oldest first',
    );
    assert.deepEqual(after.takeLastRun(), [], 'taken once');

    await after.forgetLog();
    await after.close();
    const next = await h.reopen();
    assert.deepEqual(next.takeLastRun(), []);
    assert.deepEqual(texts((await next.getOrCreate('test', 'k')).messages), ['question', 'answer'], 'the session keeps them');
    await next.close();
  });

  it('forgetLog makes what derives from the log durable first; when that fails, the log keeps its lines for the next start', async (h) => {
    let flushed = 0;
    h.store.deriveFromLog({ flush: async () => void flushed++, durable: () => true });
    await h.store.writer(await h.store.getOrCreate('test', 'k')).append(makeMessage('user', 'one'));
    await h.store.forgetLog();
    assert.equal(flushed, 1);

    const after = await h.crash();
    assert.deepEqual(after.takeLastRun(), []);
    after.deriveFromLog({
      flush: async () => {
        throw new Error('disk full');
      },
      durable: () => true,
    });
    await after.writer(await after.getOrCreate('test', 'k')).append(makeMessage('user', 'two'));
    await assert.rejects(after.forgetLog(), /disk full/);

    const next = await h.crash();
    assert.deepEqual(texts(next.takeLastRun().flatMap((l) => l.messages)), ['two']);
  });

  it("redact takes the words out of the chat's log lines for good, and out of no other chat's: with the session replaced, a kill brings them back nowhere", async (h) => {
    const s = await h.store.getOrCreate('test', 'k');
    const w = h.store.writer(s);
    await w.append(makeMessage('user', 'my locker code is 4711', { senderName: 'Ann 4711' }));
    await w.append(makeMessage('assistant', 'noted'));
    await h.store.writer(await h.store.getOrCreate('test', 'other')).append(makeMessage('user', 'their code is 4711 too'));
    await w.replace(s.messages.filter((m) => !m.content.includes('4711')));
    const words = { test: (t: string) => t.includes('4711'), redact: (t: string) => t.replaceAll('4711', '****') };
    assert.ok((await h.store.redact('test', 'k', words)).length > 0, 'it says what changed');
    assert.deepEqual(await h.store.redact('test', 'k', words), [], 'nothing left to change');
    assert.deepEqual(await h.store.redact('test', 'nobody', words), []);

    const after = await h.crash();
    const lines = after.takeLastRun();
    const mine = lines.filter((l) => l.chatId === 'k');
    assert.ok(!JSON.stringify(mine).includes('4711'));
    assert.ok(JSON.stringify(mine).includes('my locker code is ****'), 'the rest of the line stays');
    assert.ok(JSON.stringify(lines.filter((l) => l.chatId === 'other')).includes('their code is 4711 too'), "another chat's lines are left");
    assert.deepEqual(texts((await after.getOrCreate('test', 'k')).messages), ['noted']);
  });

  it("a chat's model is kept, and unsetting it goes back to the default, across kills", async (h) => {
    const w = h.store.writer(await h.store.getOrCreate('test', 'k'));
    await w.setModel('small-model');
    let after = await h.crash();
    const s = await after.getOrCreate('test', 'k');
    assert.equal(s.metadata.model, 'small-model');
    await after.writer(s).setModel(undefined);
    after = await h.crash();
    assert.equal((await after.getOrCreate('test', 'k')).metadata.model, undefined);
  });

  it('names noted are there after a clean restart', async (h) => {
    h.store.names.note('test', '1', { kind: 'private', name: 'Ann' });
    await h.store.close();
    const again = await h.reopen();
    assert.deepEqual(again.names.get('test:1'), { kind: 'private', name: 'Ann' });
    await again.close();
  });

  it("erase takes a chat's session and log lines for good, and nothing of another chat's; the lists name the chats kept", async (h) => {
    for (const chatId of ['1', '1:7', '2']) await h.store.writer(await h.store.getOrCreate('test', chatId)).append(makeMessage('user', `code ${chatId} PLUM`));
    await h.store.flush();
    const keys = (chats: Array<{ channel: string; chatId: string }>) => chats.map((c) => `${c.channel}:${c.chatId}`).sort();
    assert.deepEqual(keys(await h.store.chats()), ['test:1', 'test:1:7', 'test:2']);
    assert.deepEqual(keys(await h.store.traces()), ['test:1', 'test:1:7', 'test:2']);
    assert.ok((await h.store.footprint('test', '1')).bytes > 0, 'a kept session has a size');
    assert.deepEqual(await h.store.footprint('test', 'never'), { bytes: 0, mtime: 0 });
    await h.store.close();

    // As purge does it: the store that wrote closed, another over the same state.
    const idle = await h.reopen();
    assert.ok(
      (
        await idle.erase([
          { channel: 'test', chatId: '1' },
          { channel: 'test', chatId: '1:7' },
        ])
      ).length > 0,
      'it says what it deleted',
    );
    assert.deepEqual(await idle.erase([{ channel: 'test', chatId: '1' }]), [], 'nothing left to delete');
    const after = await h.crash();
    assert.deepEqual(keys(await after.traces()), ['test:2']);
    assert.deepEqual(texts((await after.getOrCreate('test', '1')).messages), []);
    assert.deepEqual(texts((await after.getOrCreate('test', '2')).messages), ['code 2 PLUM']);
    if (h.holds) assert.equal(await h.holds('code 1'), false, 'no byte of the erased chats left');
  });

  it('dump → load into a fresh store → dump gives the same items, and the fresh store serves the same sessions and log', async (h) => {
    const w = h.store.writer(await h.store.getOrCreate('test', 'k'));
    w.receive(inbound('héllo "quoted" \n 😀', '1'));
    await w.append(makeMessage('assistant', 'hi'));
    await w.setModel('small-model');
    const other = h.store.writer(await h.store.getOrCreate('console', '../x'));
    await other.append(makeMessage('user', 'elsewhere'));
    await other.replace([makeMessage('system', 'summary')], { at: '2026-03-01T10:00:00.000Z', kind: 'summary', removed: 1, kept: 0 });
    await h.store.flush();
    const items = await collect(h.store.dump());
    assert.deepEqual(
      items
        .filter((i) => i.kind === 'session')
        .map((i) => `${i.channel}:${i.chatId}`)
        .sort(),
      ['console:../x', 'test:k'],
    );
    assert.ok(
      items.some((i) => i.kind === 'log'),
      'the log lines move too',
    );

    const fresh = await make();
    try {
      assert.equal(await fresh.store.isEmpty(), true);
      const all = [...items, ...handMade];
      assert.equal(
        await fresh.store.load(
          (async function* () {
            yield* all;
          })(),
        ),
        all.length,
      );
      assert.equal(await fresh.store.isEmpty(), false);
      assert.deepEqual(sorted(await collect(fresh.store.dump())), sorted(all));
      await fresh.store.close();

      // What the next start over the loaded state finds: the same sessions, the log's lines.
      const next = await fresh.reopen();
      const back = await next.getOrCreate('test', 'k');
      assert.deepEqual(plain(back.messages), plain((await h.store.getOrCreate('test', 'k')).messages));
      assert.equal(back.metadata.model, 'small-model');
      assert.deepEqual(texts((await next.getOrCreate('telegram', '-100:7')).messages), ['by hand é é']);
      const lines = next.takeLastRun();
      assert.deepEqual(texts(lines.flatMap((l) => l.messages)).sort(), ['elsewhere', 'hi', 'héllo "quoted" \n 😀', 'logged'].sort());
      assert.ok(lines.some((l) => l.seq === 5));
      // Numbers go on above the loaded ones: a line written now comes after them.
      await next.writer(back).append(makeMessage('user', 'after the move'));
      await next.close();
      const after = await fresh.crash();
      const last = after.takeLastRun();
      assert.equal(texts(last.at(-1)!.messages).at(-1), 'after the move');
      assert.ok(last.at(-1)!.seq > Math.max(...lines.map((l) => l.seq)));

      await after.clear();
      assert.equal(await after.isEmpty(), true);
      assert.deepEqual(await collect(after.dump()), []);
    } finally {
      await fresh.cleanup();
    }
  });

  it('a log line a move brought beyond its session (a kill before the session was written) is in the session at the next start, once', async (h) => {
    const [older, newer] = [makeMessage('user', 'in the session'), makeMessage('assistant', 'in the log only')];
    const session = { ...JSON.parse(JSON.stringify(await h.store.getOrCreate('test', 'm'))), messages: [older], walSeq: 7 };
    const line = (seq: number, messages: SessionMessage[]) =>
      JSON.stringify({ seq, channelType: 'test', chatId: 'm', conversation: session.metadata.conversationId, messages });
    const fresh = await make();
    try {
      const items: SessionItem[] = [
        { kind: 'session', channel: 'test', chatId: 'm', text: JSON.stringify(session, null, 1) },
        { kind: 'log', channel: 'test', chatId: 'm', text: line(7, [older]) },
        { kind: 'log', channel: 'test', chatId: 'm', text: line(8, [older, newer]) },
      ];
      await fresh.store.load(
        (async function* () {
          yield* items;
        })(),
      );
      await fresh.store.close();
      const next = await fresh.reopen();
      assert.deepEqual(texts((await next.getOrCreate('test', 'm')).messages), ['in the session', 'in the log only']);
      await next.close();
      const again = await fresh.reopen();
      assert.deepEqual(texts((await again.getOrCreate('test', 'm')).messages), ['in the session', 'in the log only']);
      await again.close();
    } finally {
      await fresh.cleanup();
    }
  });
}
