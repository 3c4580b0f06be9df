/**
 * Chat claims over the PostgreSQL intake journal (src/cluster/claims.ts) and the loop that runs
 * them (runner.ts): several processes take the journal's entries, each chat run by one at a
 * time, in order; a killed process's chats pass to another within the lease time, with the
 * recovery marks a restart would see.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatClaims, type ClaimedEntry } from '../../src/cluster/claims.js';
import { ClaimRunner } from '../../src/cluster/runner.js';
import { Dispatcher } from '../../src/queue/dispatcher.js';
import { PgInbox } from '../../src/queue/inbox-pg.js';
import { argumentsHash } from '../../src/queue/inbox.js';
import type { InboundMessage } from '../../src/core/message.js';
import { silentLogger } from '../../src/core/log.js';
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

test('risk: two processes run one chat at once, or out of order, or a killed one strands its chats — each chat is run by one process at a time, every message once, in the order accepted', async () => {
  const url = await migratedDatabase(cluster);
  const acceptor = proc(url, 'acceptor', 60_000);
  const workers = [proc(url, 'w1', 1_500), proc(url, 'w2', 1_500), proc(url, 'w3', 1_500)];
  const chats = ['1', '2', '3', '4', '5', '6'];
  const total = 90;
  /** Per chat, the worker running one of its messages now. */
  const running = new Map<string, string>();
  const handled: Array<{ chat: string; text: string; by: string }> = [];
  const overlaps: string[] = [];
  let killed: string | undefined;
  let victim = -1;
  /** Per worker, entries being closed now. */
  const closing = new Map<string, number>();
  /** What the killed worker was running: never finished (its process is gone). */
  let unhang: () => void = () => undefined;
  const hung = new Promise<void>((resolve) => (unhang = resolve));
  // Each worker runs its claimed entries as the intake is to: in the chat's queue of its
  // dispatcher (the real one), adopt, start, handle, close.
  const runners = workers.map((w) => {
    const dispatcher = new Dispatcher(8);
    return new ClaimRunner(w.claims, {
      maxChats: 3,
      idleMs: 20,
      log: silentLogger(),
      run: (e) =>
        dispatcher.submit(e.chat.chatId, async () => {
          if (killed === w.name) return hung;
          const chat = e.chat.chatId;
          w.inbox.adopt(e.id);
          if (running.has(chat)) overlaps.push(`${chat}: ${running.get(chat)} and ${w.name}`);
          running.set(chat, w.name);
          await w.inbox.started(e.id);
          if (killed === w.name) return hung;
          running.delete(chat);
          // Handled once its entry is closed (a kill before that leaves it to another process).
          closing.set(w.name, (closing.get(w.name) ?? 0) + 1);
          await w.inbox.done(e.id);
          handled.push({ chat, text: e.msg.text, by: w.name });
          closing.set(w.name, closing.get(w.name)! - 1);
        }),
    });
  });
  try {
    for (const r of runners) r.start();
    for (let i = 0; i < total; i++) {
      await accept(acceptor, message(chats[i % chats.length]!, `message ${i}`));
      if (i === total / 3) {
        // kill -9 of a worker with chats under way: it answers nothing more, its connections are cut.
        await waitFor(() => runners.some((r) => r.running > 0), 10_000, 'a worker to hold a chat');
        victim = runners.findIndex((r) => r.running > 0);
        killed = workers[victim]!.name;
        running.clear();
        // Not between a close's commit and its answer: the test could not tell whether it counted.
        await waitFor(() => !closing.get(killed!), 10_000, 'the killed worker to finish closing an entry');
        await killDatabase(workers[victim]!.db, url);
      }
    }
    await waitFor(() => handled.length >= total, 30_000, `every message handled (${handled.length} of ${total})`);
    assert.deepEqual(overlaps, [], 'no chat ran in two processes at once');
    assert.equal(new Set(handled.map((h) => h.text)).size, total, 'every message');
    assert.equal(handled.length, total, 'each once');
    for (const chat of chats) {
      const order = handled.filter((h) => h.chat === chat).map((h) => Number(h.text.split(' ')[1]));
      assert.deepEqual(
        order,
        [...order].sort((a, b) => a - b),
        `chat ${chat} in order`,
      );
    }
    assert.ok(new Set(handled.map((h) => h.by)).size > 1, 'the work was shared');
    await Promise.all(runners.filter((_, i) => i !== victim).map((r) => r.stop()));
    const { rows } = await acceptor.db.query<{ n: number }>('SELECT count(*)::int AS n FROM inbox_claims WHERE owner <> $1', [killed]);
    assert.equal(rows[0]!.n, 0, 'every chat let go at the end');
  } finally {
    unhang();
    await Promise.all(runners.map((r) => r.stop()));
    for (const p of [acceptor, ...workers]) await p.db.close().catch(() => undefined);
  }
});

test('risk: a process killed mid-turn holds its chat forever — another takes it within the lease time and runs it as a restart would: attempts counted, the tool it died in named, order kept', async () => {
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
    assert.deepEqual(
      (await a.claims.claimWork()).map((e) => e.msg.text),
      ['one'],
    );
    // Accepted by b while a runs the chat: b cannot claim it, a takes it before letting go.
    await accept(b, message('9', 'two'));
    assert.deepEqual(await b.claims.claimWork({ chat }), []);
    a.inbox.adopt(one);
    await a.inbox.done(one);
    assert.equal(await a.claims.release(chat), 'more');
    const more = await a.claims.claimWork({ chat });
    assert.deepEqual(
      more.map((e) => [e.msg.text, e.takenOver]),
      [['two', false]],
    );
    a.inbox.adopt(more[0]!.id);
    await a.inbox.done(more[0]!.id);
    assert.equal(await a.claims.release(chat), 'released');
    assert.equal(a.claims.holds(chat), false);
    await accept(a, message('9', 'three'));
    assert.deepEqual(
      (await b.claims.claimWork()).map((e) => e.msg.text),
      ['three'],
      'the chat is free: b takes it',
    );
    assert.equal(await a.claims.release(chat), 'lost');
  } finally {
    await a.db.close();
    await b.db.close();
  }
});

test('a process that keeps renewing keeps its chat past the lease time; one whose chat was taken hears it lost', async () => {
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

test("risk: a chat taken while the heartbeat's renewal is on its way is heard as lost, and its turn stopped — a renewal judges only the chats held when it was sent", async () => {
  const url = await migratedDatabase(cluster);
  const a = proc(url, 'a', 10_000);
  // The renewal's answer arrives late (a slow network), after the chat below is taken.
  let late!: () => void;
  const arrived = new Promise<void>((r) => (late = r));
  const slow = new Proxy(a.db, {
    get(db, prop) {
      if (prop !== 'query') return Reflect.get(db, prop);
      return async (text: string, params?: unknown[]) => {
        const res = await db.query(text, params);
        if (text.startsWith('UPDATE inbox_claims SET expires_at')) await arrived;
        return res;
      };
    },
  });
  const claims = new ChatClaims(slow, 'a', 10_000);
  try {
    await accept(a, message('7', 'first chat'));
    assert.equal((await claims.claimWork()).length, 1);
    const renewing = claims.renew();
    await accept(a, message('8', 'second chat'));
    assert.equal((await claims.claimWork()).length, 1, 'the second chat is taken while the renewal is on its way');
    late();
    assert.deepEqual(await renewing, [], 'nothing lost: the second chat was taken after the renewal went out');
    assert.ok(claims.holds({ channel: 'telegram', chatId: '8' }));
    assert.deepEqual(await claims.renew(), []);
  } finally {
    await a.db.close();
  }
});

test("risk: a reminder delivered by a process that does not hold the chat writes its session beside the holder's turn — work as the chat's holder waits while another process holds it, runs inside the holder's own run before it lets go, and takes a free chat", async () => {
  const url = await migratedDatabase(cluster);
  const procs = [proc(url, 'p1', 60_000), proc(url, 'p2', 60_000)];
  /** Everything that writes a chat, in the order it started and ended, with who did it. */
  const events: string[] = [];
  const writing = new Map<string, string>();
  const overlaps: string[] = [];
  const gates = new Map<string, () => void>();
  const gate = (name: string) => new Promise<void>((r) => gates.set(name, r));
  const write = async (chat: string, what: string, wait?: Promise<void>) => {
    if (writing.has(chat)) overlaps.push(`${chat}: ${writing.get(chat)} and ${what}`);
    writing.set(chat, what);
    events.push(`start ${what}`);
    await wait;
    writing.delete(chat);
    events.push(`end ${what}`);
  };
  const runners = procs.map((p) => {
    const dispatcher = new Dispatcher(8);
    const runner = new ClaimRunner(p.claims, {
      maxChats: 4,
      idleMs: 20,
      log: silentLogger(),
      run: (e) =>
        dispatcher.submit(e.chat.chatId, async () => {
          p.inbox.adopt(e.id);
          await p.inbox.started(e.id);
          await write(e.chat.chatId, `${p.name} turn ${e.msg.text}`, e.msg.text.startsWith('slow') ? gate(e.msg.text) : undefined);
          await p.inbox.done(e.id);
        }),
    });
    return { runner, dispatcher };
  });
  const [one, two] = runners;
  const chat = (id: string) => ({ channel: 'telegram', chatId: id });
  try {
    for (const r of runners) r.runner.start();
    // Chat 7: p1 runs a slow turn; p2's delivery waits for p1 to let the chat go.
    await accept(procs[0]!, message('7', 'slow 7'));
    await waitFor(() => gates.has('slow 7'), 10_000, 'a slow turn of chat 7 under way');
    const holder = (await procs[0]!.claims.holder(chat('7'))) === 'p1' ? one! : two!;
    const other = holder === one ? two! : one!;
    const otherName = holder === one ? 'p2' : 'p1';
    const remote = other.runner.asHolder(chat('7'), (fresh) => write('7', `${otherName} reminder (fresh ${fresh})`));
    // Work of the holder itself runs in its run of the chat, through the chat's queue, before the chat is let go.
    const own = holder.runner.asHolder(chat('7'), (fresh) => holder.dispatcher.submit('7', () => write('7', `own reminder (fresh ${fresh})`)));
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(!events.some((e) => e.includes('reminder')), `nothing else writes chat 7 while its slow turn runs: ${events.join(', ')}`);
    gates.get('slow 7')!();
    await Promise.all([remote, own]);
    const seven = events.filter((e) => / 7\b|reminder/.test(e));
    assert.deepEqual(
      seven.map((e) => e.replace(/p[12] turn/, 'turn').replace(/p[12] reminder/, 'remote reminder')),
      [
        'start turn slow 7',
        'end turn slow 7',
        'start own reminder (fresh false)',
        'end own reminder (fresh false)',
        'start remote reminder (fresh true)',
        'end remote reminder (fresh true)',
      ],
    );

    // Chat 9 is free: taken at once; a message accepted meanwhile is run by the same process after it.
    let release!: () => void;
    const held = one!.runner.asHolder(chat('9'), () => write('9', 'p1 reminder', new Promise<void>((r) => (release = r))));
    await waitFor(() => events.includes('start p1 reminder'), 10_000, 'the reminder of the free chat 9');
    await accept(procs[1]!, message('9', 'after'));
    await new Promise((r) => setTimeout(r, 200));
    release();
    await held;
    await waitFor(() => events.some((e) => e.startsWith('end') && e.endsWith('turn after')), 10_000, 'the message of chat 9 handled');
    assert.ok(events.includes('end p1 turn after'), `run by the process that held chat 9: ${events.join(', ')}`);
    assert.ok(events.indexOf('end p1 reminder') < events.indexOf('start p1 turn after'), 'after the reminder');
    assert.deepEqual(overlaps, [], 'nothing wrote a chat beside anything else');
  } finally {
    for (const g of gates.values()) g();
    for (const r of runners) await r.runner.stop();
    for (const p of procs) await p.db.close();
  }
});

test("risk: a look for work already on its way when a reminder takes a free chat starts a second run of that chat, and the first lets the chat go while the second still runs — another process then runs the chat's next message beside it", async () => {
  const url = await migratedDatabase(cluster);
  const [p1, p2] = [proc(url, 'p1', 60_000), proc(url, 'p2', 60_000)];
  // p1's claims are the real ones; only its loop's general look waits at a gate, as a slow statement would.
  let opened = (): void => undefined;
  const gate = new Promise<void>((r) => (opened = r));
  let looking = false;
  const claims = Object.create(p1.claims) as ChatClaims;
  claims.claimWork = async (opts) => {
    if (opts?.exclude && !looking) {
      looking = true;
      await gate;
    }
    return p1.claims.claimWork(opts);
  };
  const events: string[] = [];
  const gates = new Map<string, () => void>();
  const slow = (name: string) => new Promise<void>((r) => gates.set(name, r));
  const runner = (p: Proc, c: ChatClaims) =>
    new ClaimRunner(c, {
      maxChats: 4,
      idleMs: 20,
      log: silentLogger(),
      run: async (e) => {
        p.inbox.adopt(e.id);
        await p.inbox.started(e.id);
        events.push(`start ${p.name} turn ${e.msg.text}`);
        if (e.msg.text === 'after') await slow('after');
        events.push(`end ${p.name} turn ${e.msg.text}`);
        await p.inbox.done(e.id);
      },
    });
  const one = runner(p1, claims);
  const two = runner(p2, p2.claims);
  try {
    one.start();
    await waitFor(() => looking, 10_000, "p1's look for work on its way");
    const reminder = one.asHolder({ channel: 'telegram', chatId: '9' }, async () => {
      events.push('start reminder');
      await slow('reminder');
      events.push('end reminder');
    });
    await accept(p1, message('9', 'after'));
    opened();
    await waitFor(() => events.includes('start p1 turn after'), 10_000, 'the message run by p1');
    two.start();
    await accept(p2, message('9', 'next'));
    await waitFor(() => gates.has('reminder'), 10_000, 'the reminder under way');
    gates.get('reminder')!();
    await reminder;
    await new Promise((r) => setTimeout(r, 500));
    gates.get('after')!();
    await waitFor(() => events.some((e) => e.startsWith('end') && e.endsWith('turn next')), 10_000, 'the next message handled');
    const turns = events.filter((e) => e.includes('turn'));
    assert.deepEqual(
      turns.map((e) => e.replace(/ p[12] /, ' ')),
      ['start turn after', 'end turn after', 'start turn next', 'end turn next'],
      `chat 9 run by one process at a time, in order: ${events.join(', ')}`,
    );
  } finally {
    opened();
    for (const g of gates.values()) g();
    await one.stop();
    await two.stop();
    await p1.db.close();
    await p2.db.close();
  }
});
