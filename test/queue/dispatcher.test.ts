import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';
import { Dispatcher, DispatcherClosedError } from '../../src/queue/dispatcher.js';
import { startTestBot } from '../helpers/app.js';
import { lastUserText, text, type RecordedRequest } from '../helpers/fake-llm.js';

function randomMs(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}

/** A promise with its resolve exposed: a task blocks on it until the test lets it go. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/** Lets every task that can start do so (the dispatcher starts tasks synchronously or on a resolved promise). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await tick();
}

test('work for one key runs in arrival order and never overlaps, with two keys submitted concurrently', async () => {
  const d = new Dispatcher(8);
  const events: Array<{ key: string; i: number; ev: 'start' | 'end' }> = [];
  const all: Promise<void>[] = [];
  for (let i = 0; i < 8; i++) {
    for (const key of ['a', 'b']) {
      all.push(
        d.submit(key, async () => {
          events.push({ key, i, ev: 'start' });
          await sleep(randomMs(0, 12));
          events.push({ key, i, ev: 'end' });
        }),
      );
    }
  }
  await Promise.all(all);
  for (const key of ['a', 'b']) {
    const mine = events.filter((e) => e.key === key);
    assert.equal(mine.length, 16, `every task of ${key} ran once`);
    // Strictly start, end, start, end, … in submission order: no overlap and FIFO.
    const expected = Array.from({ length: 8 }, (_, i) => [`start ${i}`, `end ${i}`]).flat();
    assert.deepEqual(
      mine.map((e) => `${e.ev} ${e.i}`),
      expected,
      `key ${key}`,
    );
  }
});

test('different keys run at the same time', async () => {
  const d = new Dispatcher(8);
  const started: string[] = [];
  const ended: string[] = [];
  const gates = { a: gate(), b: gate() };
  const pa = d.submit('a', async () => {
    started.push('a');
    await gates.a.promise;
    ended.push('a');
  });
  const pb = d.submit('b', async () => {
    started.push('b');
    await gates.b.promise;
    ended.push('b');
  });
  await settle();
  try {
    assert.deepEqual(started.sort(), ['a', 'b'], 'both keys started while neither had finished');
    assert.deepEqual(ended, []);
    assert.equal(d.stats.active, 2);
  } finally {
    gates.a.open();
    gates.b.open();
    await Promise.all([pa, pb]);
  }
  assert.deepEqual(ended.sort(), ['a', 'b']);
});

test('maxConcurrent caps how many keys run at once, and waiting keys start first come, first served', async () => {
  const d = new Dispatcher(2);
  const keys = ['k0', 'k1', 'k2', 'k3', 'k4'];
  const gates = new Map(keys.map((k) => [k, gate()]));
  const started: string[] = [];
  let running = 0;
  let maxRunning = 0;
  const all = keys.map((k) =>
    d.submit(k, async () => {
      started.push(k);
      running++;
      maxRunning = Math.max(maxRunning, running);
      await gates.get(k)!.promise;
      running--;
    }),
  );
  try {
    await settle();
    assert.deepEqual(started, ['k0', 'k1'], 'only two run at first');
    assert.deepEqual(d.stats, { active: 2, queued: 3, chats: 5 });
    gates.get('k1')!.open();
    await settle();
    assert.deepEqual(started, ['k0', 'k1', 'k2'], 'a freed slot goes to the key that waited longest');
    gates.get('k0')!.open();
    await settle();
    assert.deepEqual(started, ['k0', 'k1', 'k2', 'k3']);
    assert.equal(running, 2);
  } finally {
    for (const g of gates.values()) g.open();
    await Promise.all(all);
  }
  assert.deepEqual(started, keys);
  assert.equal(maxRunning, 2, 'never more than 2 at once, and the cap was reached');
});

test('maxConcurrent holds under random delays with several tasks per key', async () => {
  const d = new Dispatcher(2);
  let running = 0;
  let maxRunning = 0;
  let done = 0;
  const all: Promise<void>[] = [];
  for (let round = 0; round < 3; round++) {
    for (let k = 0; k < 5; k++) {
      all.push(
        d.submit(`key${k}`, async () => {
          running++;
          maxRunning = Math.max(maxRunning, running);
          await sleep(randomMs(0, 8));
          running--;
          done++;
        }),
      );
    }
  }
  await Promise.all(all);
  assert.equal(done, 15);
  assert.equal(maxRunning, 2);
  assert.deepEqual(d.stats, { active: 0, queued: 0, chats: 0 });
});

test('a task that rejects rejects its own submit and does not block the next task of that key', async () => {
  const d = new Dispatcher(1);
  const ran: string[] = [];
  const boom = new Error('task failed');
  const p1 = d.submit('a', async () => {
    ran.push('1');
    throw boom;
  });
  const p2 = d.submit('a', () => {
    ran.push('2');
    throw new Error('sync throw');
  });
  const p3 = d.submit('a', async () => {
    ran.push('3');
  });
  const p4 = d.submit('b', async () => {
    ran.push('b');
  });
  await assert.rejects(p1, (err) => err === boom);
  await assert.rejects(p2, /sync throw/);
  await p3;
  await p4;
  assert.deepEqual(
    ran.filter((r) => r !== 'b'),
    ['1', '2', '3'],
  );
  assert.ok(ran.includes('b'));
  assert.equal(await d.drain(1000), true);
});

test('close() makes submit reject, while work already queued still runs', async () => {
  const d = new Dispatcher(1);
  const g = gate();
  const ran: string[] = [];
  const running = d.submit('a', async () => {
    ran.push('running');
    await g.promise;
  });
  const queued = d.submit('a', async () => {
    ran.push('queued');
  });
  d.close();
  await assert.rejects(
    d.submit('a', async () => {
      ran.push('late');
    }),
    DispatcherClosedError,
  );
  await assert.rejects(
    d.submit('other', async () => {
      ran.push('late-other');
    }),
    DispatcherClosedError,
  );
  g.open();
  await running;
  await queued;
  assert.deepEqual(ran, ['running', 'queued']);
});

test('drain() resolves true once queued work has finished', async () => {
  const d = new Dispatcher(2);
  assert.equal(await d.drain(10), true, 'idle: true at once');
  const done: string[] = [];
  for (const key of ['a', 'a', 'b', 'c']) {
    void d.submit(key, async () => {
      await sleep(randomMs(1, 10));
      done.push(key);
    });
  }
  assert.equal(await d.drain(5000), true);
  assert.equal(done.length, 4, 'all work had finished when drain resolved');
  assert.deepEqual(d.stats, { active: 0, queued: 0, chats: 0 });
});

test('drain() resolves false when the work does not finish in time', async () => {
  const d = new Dispatcher(2);
  const g = gate();
  const p = d.submit('a', () => g.promise);
  const q = d.submit('a', async () => undefined);
  assert.equal(await d.drain(30), false);
  assert.equal(d.stats.active, 1);
  g.open();
  await Promise.all([p, q]);
  assert.equal(await d.drain(1000), true);
});

test('end to end: two chats sending 5 messages each at once get their replies in order, with only their own history', async () => {
  // Chat A's first request waits until a request of chat B has arrived: if chats were served one
  // at a time this would never happen (the gate gives up after 3 s and the test fails).
  let bArrived!: () => void;
  const bSeen = new Promise<void>((r) => (bArrived = r));
  let overlapped = false;
  const bot = await startTestBot({
    responder: async (req) => {
      const last = lastUserText(req);
      if (last.startsWith('B-')) bArrived();
      if (last === 'A-1') {
        const giveUp = new AbortController();
        overlapped = await Promise.race([bSeen.then(() => true), sleep(3000, false, { signal: giveUp.signal }).catch(() => false)]);
        giveUp.abort();
      }
      await sleep(randomMs(5, 30));
      return text(`echo: ${last}`);
    },
  });
  try {
    const sends: Promise<string[]>[] = [];
    for (let i = 1; i <= 5; i++) {
      sends.push(bot.send('A', `A-${i}`));
      sends.push(bot.send('B', `B-${i}`));
    }
    await Promise.all(sends);
    assert.ok(overlapped, 'chat B was served while chat A waited for the model');

    for (const chat of ['A', 'B']) {
      const other = chat === 'A' ? 'B' : 'A';
      assert.deepEqual(
        bot.replies.get(chat),
        [1, 2, 3, 4, 5].map((i) => `echo: ${chat}-${i}`),
        `chat ${chat}: replies in the order the messages were sent`,
      );
      const reqs = bot.llm.chatRequests().filter((r: RecordedRequest) => lastUserText(r).startsWith(`${chat}-`));
      assert.deepEqual(
        reqs.map((r) => lastUserText(r)),
        [1, 2, 3, 4, 5].map((i) => `${chat}-${i}`),
        `chat ${chat}: the model was asked in send order`,
      );
      reqs.forEach((r, k) => {
        const history = (r.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role !== 'system');
        const expected: Array<[string, string]> = [];
        for (let i = 1; i <= k; i++) expected.push(['user', `${chat}-${i}`], ['assistant', `echo: ${chat}-${i}`]);
        expected.push(['user', `${chat}-${k + 1}`]);
        assert.deepEqual(
          history.map((m) => [m.role, m.content]),
          expected,
          `chat ${chat}, message ${k + 1}: history holds exactly this chat's earlier exchange`,
        );
        assert.ok(!JSON.stringify(r.body.messages).includes(`${other}-`), `no message of chat ${other} in chat ${chat}'s request`);
      });
      const file = JSON.parse(await readFile(path.join(bot.workspace, 'sessions', `test:${chat}.json`), 'utf8'));
      assert.equal(file.messages.length, 10);
      assert.ok(file.messages.every((m: any) => m.content.includes(`${chat}-`)));
    }
  } finally {
    bArrived();
    await bot.close();
  }
});

test('a task that gives its slot back early lets other chats run at once, while its own chat stays closed until it ends', async () => {
  const d = new Dispatcher(1);
  const stuck = gate();
  const events: string[] = [];
  const a1 = d.submit('a', async (release) => {
    events.push('a1 start');
    release();
    release(); // twice is harmless
    await stuck.promise;
    events.push('a1 end');
  });
  const a2 = d.submit('a', async () => void events.push('a2'));
  const b = d.submit('b', async () => void events.push('b'));
  await b;
  assert.deepEqual(events, ['a1 start', 'b'], 'b ran in the slot a1 gave back; a2 still waits behind a1');
  assert.equal(d.queued('a'), 1);
  assert.equal(d.stats.active, 0, 'a released slot is not counted');
  stuck.open();
  await Promise.all([a1, a2]);
  assert.deepEqual(events, ['a1 start', 'b', 'a1 end', 'a2']);
  assert.equal(await d.drain(1000), true);
});
