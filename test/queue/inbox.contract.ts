/**
 * What every Inbox (src/queue/inbox.ts), the intake journal, must do: run by file-inbox.test.ts
 * against FileInbox. What the intake relies on: a message accepted is found at the next start
 * after a kill until it is closed, oldest first; a copy of a message it holds is recognised and
 * never handled; starts count across restarts; a tool call the
 * process died in is named, without its arguments; an album closes in one go; words taken out
 * stay out.
 */
import assert from 'node:assert/strict';
import { argumentsHash, type Inbox } from '../../src/queue/inbox.js';
import type { InboundMessage } from '../../src/core/message.js';
import { contractTest, type StoreHarness } from '../helpers/stores.js';

function message(chatId: string, words: string, messageId: string, extra: Partial<InboundMessage> = {}): InboundMessage {
  return { channel: 'test', chatId, userId: `u-${chatId}`, userName: 'Tester', text: words, messageId, receivedAt: new Date('2026-11-20T10:00:00Z'), ...extra };
}

const openIds = async (inbox: Inbox): Promise<string[]> => (await inbox.unfinished()).entries.map((e) => e.id);

export function inboxContract(make: () => Promise<StoreHarness<Inbox>>): void {
  const it = contractTest(make);

  it('an accepted message is found whole at the next start after a kill, until it is done', async (h) => {
    const msg = message('1', 'hello 😀 "quoted"\nnext line', '11', {
      chat: { kind: 'topic', name: 'Honey sales', group: { chatId: '-100' } },
      albumId: 'g1',
      image: { kind: 'photo', fileId: 'photo-1', width: 800, height: 600 },
    });
    const { id, durable } = h.store.accept(msg);
    await durable;
    const after = await h.crash();
    assert.deepEqual(await after.unfinished(), { entries: [{ id, msg, attempt: 0, interrupted: [], completed: [] }], duplicates: [] });

    after.adopt(id);
    await after.done(id);
    const next = await h.crash();
    assert.deepEqual(await next.unfinished(), { entries: [], duplicates: [] });
  });

  it('unfinished entries come oldest first, one per message; one done is not among them', async (h) => {
    const accepted = ['a', 'b', 'c', 'd', 'e'].map((w, i) => h.store.accept(message(String(i % 2), w, String(i))));
    await Promise.all(accepted.map((a) => a.durable));
    await h.store.done(accepted[1]!.id);
    const after = await h.crash();
    assert.deepEqual(
      (await after.unfinished()).entries.map((e) => e.msg.text),
      ['a', 'c', 'd', 'e'],
    );
  });

  it('every start of handling counts, across restarts, under the same id', async (h) => {
    const { id, durable } = h.store.accept(message('1', 'slow one', '11'));
    await durable;
    await h.store.started(id);
    let after = await h.crash();
    assert.deepEqual(
      (await after.unfinished()).entries.map((e) => [e.id, e.attempt]),
      [[id, 1]],
    );
    after.adopt(id);
    await after.started(id);
    after = await h.crash();
    assert.deepEqual(
      (await after.unfinished()).entries.map((e) => [e.id, e.attempt]),
      [[id, 2]],
    );
  });

  it('a copy of a message the journal holds, open or closed (same chat, message id and words), is recorded closed and names the entry that has it', async (h) => {
    const a = h.store.accept(message('1', 'asked once', '11'));
    const b = h.store.accept(message('1', 'answered', '12'));
    await Promise.all([a.durable, b.durable]);
    await h.store.done(b.id);
    // The channel sends both again (a kill came before it recorded their update ids).
    const later = { receivedAt: new Date('2026-11-20T10:05:00Z') };
    const againA = h.store.accept(message('1', 'asked once', '11', later));
    const againB = h.store.accept(message('1', 'answered', '12', later));
    await Promise.all([againA.durable, againB.durable]);
    assert.deepEqual([againA.copyOf, againB.copyOf], [a.id, b.id]);
    const other = [message('2', 'asked once', '11'), message('1', 'other words', '11'), message('1', 'asked once', '13')].map((m) => h.store.accept(m));
    await Promise.all(other.map((o) => o.durable));
    assert.deepEqual(
      other.map((o) => o.copyOf),
      [undefined, undefined, undefined],
      'another chat, other words, another message id: another message',
    );
    const after = await h.crash();
    assert.deepEqual(await openIds(after), [a.id, ...other.map((o) => o.id)], 'a copy is never open');
    after.adopt(a.id);
    assert.equal(after.accept(message('1', 'asked once', '11', later)).copyOf, a.id, 'also known after a restart');
  });

  it('adopting writes nothing, and an id this run neither accepted nor adopted is not marked', async (h) => {
    const { id, durable } = h.store.accept(message('1', 'left open', '11'));
    await durable;
    const after = await h.crash();
    // Not adopted: none of these touch the entry.
    await after.started(id);
    await after.callStarted(id, 'web__search', '{}');
    await after.done(id);
    let next = await h.crash();
    assert.deepEqual(await next.unfinished(), {
      entries: [{ id, msg: message('1', 'left open', '11'), attempt: 0, interrupted: [], completed: [] }],
      duplicates: [],
    });
    // Adopted, then killed before anything else: as it was.
    next.adopt(id);
    next = await h.crash();
    assert.deepEqual(
      (await next.unfinished()).entries.map((e) => [e.id, e.attempt]),
      [[id, 0]],
    );
  });

  it('a tool call still open when the process died is named in its entry, by tool and a hash of its arguments; one that ended is not', async (h) => {
    const { id, durable } = h.store.accept(message('7', 'look it up', '71'));
    await durable;
    await h.store.started(id);
    await h.store.callStarted(id, 'web__search', '{"q": "SECRETWORD", "n": 3}');
    await h.store.callEnded(id);
    await h.store.callStarted(id, 'web__fetch', '{"url":"https://example.org/SECRETWORD"}');
    let after = await h.crash();
    const [entry] = (await after.unfinished()).entries;
    assert.deepEqual(entry?.interrupted, [{ tool: 'web__fetch', args: argumentsHash('{ "url": "https://example.org/SECRETWORD" }') }]);
    assert.ok(!JSON.stringify(entry).includes('SECRETWORD'), 'the arguments themselves are not kept');

    after.adopt(id);
    await after.started(id);
    await after.callStarted(id, 'memory_search', '{}');
    after = await h.crash();
    const [again] = (await after.unfinished()).entries;
    assert.deepEqual(
      again?.interrupted.map((c) => c.tool),
      ['web__fetch', 'memory_search'],
      "each run's interrupted call, oldest first",
    );
    assert.equal(again?.attempt, 2);
  });

  it('risk: a run that ended a call (a reminder set) and died before its turn was saved — the next run does not know the call took place; the entry names it in `completed`, by tool and hash, across runs and copies', async (h) => {
    const { id, durable } = h.store.accept(message('8', 'remind me', '81'));
    await durable;
    await h.store.started(id);
    await h.store.callStarted(id, 'schedule_message', '{"text": "SECRETWORD", "at": "09:00"}');
    await h.store.callEnded(id);
    // The answer's mark (never ended) is not a completed call.
    await h.store.callStarted(id, '(answer)', '');
    let after = await h.crash();
    const [entry] = (await after.unfinished()).entries;
    assert.deepEqual(entry?.completed, [{ tool: 'schedule_message', args: argumentsHash('{"at":"09:00","text":"SECRETWORD"}') }]);
    assert.ok(!JSON.stringify(entry).includes('SECRETWORD'), 'the arguments themselves are not kept');

    // A second run ends another call and dies: both are named, oldest first; a copy of the message adds its own.
    after.adopt(id);
    await after.started(id);
    await after.callStarted(id, 'remember_fact', '{}');
    await after.callEnded(id);
    after = await h.crash();
    const [again] = (await after.unfinished()).entries;
    assert.deepEqual(
      again?.completed.map((c) => c.tool),
      ['schedule_message', 'remember_fact'],
    );
    assert.deepEqual(
      again?.interrupted.map((c) => c.tool),
      ['(answer)'],
      'a call that ended is not interrupted',
    );
  });

  it("an album closes in one go: the first item's done closes the others given with it", async (h) => {
    const items = ['1', '2', '3'].map((n) => h.store.accept(message('5', `[Photo] ${n}`, n, { albumId: 'g' })));
    const other = h.store.accept(message('6', 'not in the album', '9'));
    await Promise.all([...items, other].map((a) => a.durable));
    await h.store.done(items[0]!.id, [items[1]!.id, items[2]!.id]);
    const after = await h.crash();
    assert.deepEqual(await openIds(after), [other.id]);
  });

  it('close ends entries an earlier run left open, without handling them', async (h) => {
    const a = h.store.accept(message('1', 'given up on', '1'));
    const b = h.store.accept(message('1', 'still to do', '2'));
    await Promise.all([a.durable, b.durable]);
    const after = await h.crash();
    await after.close([a.id]);
    await after.close([]);
    const next = await h.crash();
    assert.deepEqual(await openIds(next), [b.id]);
  });

  it("redact takes the words out of the chat's entries for good, and out of no other chat's", async (h) => {
    const { id, durable } = h.store.accept(message('1', 'my locker code is 4711', '1'));
    await durable;
    const other = h.store.accept(message('2', 'their code is 4711 too', '2'));
    await other.durable;
    const words = { test: (t: string) => t.includes('4711'), redact: (t: string) => t.replaceAll('4711', '****') };
    assert.equal(await h.store.redact('test', '1', words), true);
    assert.equal(await h.store.redact('test', '1', words), false, 'nothing left to change');
    assert.equal(await h.store.redact('test', 'nobody', words), false);
    const after = await h.crash();
    const { entries } = await after.unfinished();
    assert.deepEqual(
      entries.map((e) => [e.id, e.msg.text]),
      [
        [id, 'my locker code is ****'],
        [other.id, 'their code is 4711 too'],
      ],
    );
  });

  it('after shutdown, a message accepted is still recorded', async (h) => {
    await h.store.shutdown();
    const { id, durable } = h.store.accept(message('1', 'late one', '1'));
    await durable;
    const after = await h.crash();
    assert.deepEqual(await openIds(after), [id]);
  });

  it("erase takes a chat's entries, open or done, for good, and no other chat's; chats names those kept", async (h) => {
    const a = h.store.accept(message('1', 'my code PLUM11', '1'));
    await a.durable;
    await h.store.done(a.id);
    const b = h.store.accept(message('1', 'again PLUM11', '2'));
    await b.durable;
    const c = h.store.accept(message('2', 'their code KIWI22', '3'));
    await c.durable;
    const keys = async (inbox: Inbox) => (await inbox.chats()).map((x) => `${x.channel}:${x.chatId}`).sort();
    assert.deepEqual(await keys(h.store), ['test:1', 'test:2']);
    assert.ok((await h.store.erase([{ channel: 'test', chatId: '1' }])).length > 0, 'it says what it deleted');
    assert.deepEqual(await h.store.erase([{ channel: 'test', chatId: '1' }]), [], 'nothing left to delete');
    const after = await h.crash();
    assert.deepEqual(await keys(after), ['test:2']);
    assert.deepEqual(await openIds(after), [c.id]);
    if (h.holds) assert.equal(await h.holds('PLUM11'), false, 'no byte of the erased chat left');
  });
}
