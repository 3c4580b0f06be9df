/**
 * Chat claims over the PostgreSQL intake journal (src/cluster/claims.ts): several processes take
 * the journal's entries, each chat run by one at a time, in order; a killed process's chats pass
 * to another within the lease time, with the recovery marks a restart would see.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatClaims, type ClaimedEntry } from '../../src/cluster/claims.js';
import { PgInbox } from '../../src/queue/inbox-pg.js';
import { argumentsHash } from '../../src/queue/inbox.js';
import type { InboundMessage } from '../../src/core/message.js';
import { silentLogger } from '../../src/core/log.js';
import type { Database } from '../../src/storage/pg/database.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { killDatabase, migratedDatabase, testDatabase } from '../helpers/pg-stores.js';
import { waitFor } from '../helpers/wait.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

let sent = 0;
function message(chatId: string, text: string): InboundMessage {
  return { channel: 'telegram', chatId, userId: `u${chatId}`, userName: 'T', text, messageId: String(++sent), receivedAt: new Date() };
}

/** A process: its Database, its journal and its claims. */
function proc(url: string, name: string, leaseMs: number) {
  const db = testDatabase(url);
  return { name, db, inbox: new PgInbox(db, silentLogger()), claims: new ChatClaims(db, name, leaseMs) };
}
type Proc = ReturnType<typeof proc>;

async function accept(p: Proc, msg: InboundMessage): Promise<string> {
  const a = p.inbox.accept(msg);
  await a.durable;
  return a.id;
}

test('risk: two processes run one chat at once, or out of order — each chat is run by one process at a time, every message once, in the order accepted', async () => {
  const url = await migratedDatabase(cluster);
  const acceptor = proc(url, 'acceptor', 60_000);
  const workers = [proc(url, 'w1', 60_000), proc(url, 'w2', 60_000), proc(url, 'w3', 60_000)];
  const chats = ['1', '2', '3', '4'];
  const total = 60;
  /** Per chat, the worker running one of its messages now. */
  const running = new Map<string, string>();
  const handled: Array<{ chat: string; text: string; by: string }> = [];
  const overlaps: string[] = [];
  let ended = false;
  try {
    // The worker loop the intake is to follow: take work, run each chat's entries in order, close
    // each, let the chat go when its queue is empty (or take what arrived meanwhile).
    const work = async (w: Proc, stop: () => boolean) => {
      while (!stop()) {
        const entries = await w.claims.claimWork({ maxNewChats: 2 });
        const byChat = new Map<string, ClaimedEntry[]>();
        for (const e of entries) byChat.set(e.chat.chatId, [...(byChat.get(e.chat.chatId) ?? []), e]);
        await Promise.all(
          [...byChat].map(async ([chat, list]) => {
            let queue: ClaimedEntry[] = list;
            while (queue.length > 0) {
              for (const e of queue) {
                w.inbox.adopt(e.id);
                if (running.has(chat)) overlaps.push(`${chat}: ${running.get(chat)} and ${w.name}`);
                running.set(chat, w.name);
                await w.inbox.started(e.id);
                handled.push({ chat, text: e.msg.text, by: w.name });
                running.delete(chat);
                await w.inbox.done(e.id);
              }
              const r = await w.claims.release({ channel: 'telegram', chatId: chat });
              queue = r === 'more' ? await w.claims.claimWork({ chat: { channel: 'telegram', chatId: chat } }) : [];
            }
          }),
        );
        if (entries.length === 0) await new Promise((r) => setTimeout(r, 5));
      }
    };
    let acceptedAll = false;
    const done = () => ended || (acceptedAll && handled.length >= total);
    const loops = workers.map((w) => work(w, done));
    for (let i = 0; i < total; i++) await accept(acceptor, message(chats[i % chats.length]!, `message ${i}`));
    acceptedAll = true;
    await waitFor(() => handled.length >= total, 30_000, 'every message handled');
    await Promise.all(loops);
    assert.deepEqual(overlaps, [], 'no chat ran in two processes at once');
    assert.equal(handled.length, total, 'each message once');
    assert.equal(new Set(handled.map((h) => h.text)).size, total);
    for (const chat of chats) {
      const order = handled.filter((h) => h.chat === chat).map((h) => Number(h.text.split(' ')[1]));
      assert.deepEqual(order, [...order].sort((a, b) => a - b), `chat ${chat} in order`);
    }
    assert.ok(new Set(handled.map((h) => h.by)).size > 1, 'the work was shared');
    const { rows } = await acceptor.db.query('SELECT count(*)::int AS n FROM inbox_claims');
    assert.equal(rows[0]!.n, 0, 'every chat let go at the end');
  } finally {
    ended = true;
    for (const p of [acceptor, ...workers]) await p.db.close();
  }
});

test("risk: a process killed mid-turn holds its chat forever — another takes it within the lease time and runs it as a restart would: attempts counted, the tool it died in named, order kept", async () => {
  const url = await migratedDatabase(cluster);
  const lease = 1_500;
  const [a, b] = [proc(url, 'a', lease), proc(url, 'b', lease)];
  try {
    const first = await accept(a, message('7', 'first'));
    await accept(a, message('7', 'second'));
    const taken = await a.claims.claimWork();
    assert.deepEqual(
      taken.map((e) => [e.msg.text, e.takenOver]),
      [
        ['first', false],
        ['second', false],
      ],
    );
    a.inbox.adopt(first);
    await a.inbox.started(first);
    await a.inbox.callStarted(first, 'fetch_page', '{"url": "https://example.com"}');
    assert.deepEqual(await b.claims.claimWork(), [], "a live claim is not another's work");
    await killDatabase(a.db, url);
    let got: ClaimedEntry[] = [];
    await waitFor(async () => (got = await b.claims.claimWork()).length > 0, 10_000, "b to take the killed process's chat");
    assert.equal(a.claims.holds({ channel: 'telegram', chatId: '7' }), false, 'the killed one had stopped counting it as held before b could take it');
    assert.deepEqual(
      got.map((e) => [e.msg.text, e.takenOver, e.attempt]),
      [
        ['first', true, 1],
        ['second', true, 0],
      ],
    );
    assert.deepEqual(got[0]!.interrupted, [{ tool: 'fetch_page', args: argumentsHash('{"url":"https://example.com"}') }]);
    assert.ok(b.claims.holds({ channel: 'telegram', chatId: '7' }));
  } finally {
    await b.db.close();
  }
});

test('risk: a message accepted while its chat is being let go waits with nobody on it — release says "more", and a later message goes to whoever is free', async () => {
  const url = await migratedDatabase(cluster);
  const [a, b] = [proc(url, 'a', 60_000), proc(url, 'b', 60_000)];
  const chat = { channel: 'telegram', chatId: '9' };
  try {
    const one = await accept(b, message('9', 'one'));
    assert.deepEqual((await a.claims.claimWork()).map((e) => e.msg.text), ['one']);
    // Accepted by b while a runs the chat: b cannot claim it, a takes it before letting go.
    await accept(b, message('9', 'two'));
    assert.deepEqual(await b.claims.claimWork({ chat }), []);
    a.inbox.adopt(one);
    await a.inbox.done(one);
    assert.equal(await a.claims.release(chat), 'more');
    const more = await a.claims.claimWork({ chat });
    assert.deepEqual(more.map((e) => [e.msg.text, e.takenOver]), [['two', false]]);
    a.inbox.adopt(more[0]!.id);
    await a.inbox.done(more[0]!.id);
    assert.equal(await a.claims.release(chat), 'released');
    assert.equal(a.claims.holds(chat), false);
    await accept(a, message('9', 'three'));
    assert.deepEqual((await b.claims.claimWork()).map((e) => e.msg.text), ['three'], 'the chat is free: b takes it');
    assert.equal(await a.claims.release(chat), 'lost');
  } finally {
    await a.db.close();
    await b.db.close();
  }
});

test("a process that keeps renewing keeps its chat past the lease time; one whose chat was taken hears it lost", async () => {
  const url = await migratedDatabase(cluster);
  const lease = 1_000;
  const [a, b] = [proc(url, 'a', lease), proc(url, 'b', lease)];
  const chat = { channel: 'telegram', chatId: '5' };
  try {
    await accept(a, message('5', 'long turn'));
    assert.equal((await a.claims.claimWork()).length, 1);
    const { rows } = await a.db.query<{ t: Date }>("SELECT now() + interval '3 seconds' AS t");
    // Three lease times by the database's clock, renewing as the heartbeat does: b never gets it.
    await waitFor(
      async () => {
        assert.deepEqual(await a.claims.renew(), []);
        assert.deepEqual(await b.claims.claimWork(), []);
        return (await a.db.query<{ past: boolean }>('SELECT now() > $1 AS past', [rows[0]!.t])).rows[0]!.past;
      },
      20_000,
      'three lease times to pass',
    );
    assert.ok(a.claims.holds(chat));
    // a stops renewing (frozen): b takes it; a, back, hears it lost.
    await waitFor(async () => (await b.claims.claimWork()).length === 1, 10_000, 'b to take the chat');
    assert.deepEqual(await a.claims.renew(), [chat]);
    assert.equal(a.claims.holds(chat), false);
    assert.equal(await b.claims.holder(chat), 'b');
  } finally {
    await a.db.close();
    await b.db.close();
  }
});
