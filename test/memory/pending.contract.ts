/**
 * What every PendingWrites (src/memory/pending.ts) must do, whatever keeps the held writes: run
 * by pending.test.ts against the file and by pending.pg.test.ts against PostgreSQL. A held write
 * is kept until it is taken (once: approved or rejected) or expires; /forget and purge take the
 * ones holding the words or coming from the chat, leaving no byte of them; the held writes
 * move whole between the two stores.
 */
import assert from 'node:assert/strict';
import { PENDING_TTL_MS, type PendingWrite, type PendingWrites } from '../../src/memory/pending.js';
import { collect } from '../../src/storage/portable.js';
import { contractTest, type StoreHarness } from '../helpers/stores.js';
import { assertMovesWhole } from '../helpers/portable.js';

/** Now, to the minute: a held write lives seven days from when it was held. */
const T0 = Math.floor(Date.now() / 60_000) * 60_000;

/** A held rewrite of chat `chatId`, held `minutes` after T0. */
export function held(id: string, chatId: string, content: string, minutes = 0): PendingWrite {
  const at = T0 + minutes * 60_000;
  return {
    id,
    scope: `test:${chatId}`,
    channel: 'test',
    chatId,
    group: chatId.startsWith('-'),
    conversationId: 'c_1',
    tool: 'memory_rewrite',
    args: JSON.stringify({ content }),
    after: ['fx__read_page'],
    heldAt: new Date(at).toISOString(),
    expiresAt: new Date(at + PENDING_TTL_MS).toISOString(),
  };
}

const at = (minutes: number) => new Date(T0 + minutes * 60_000);

export function pendingWritesContract(make: () => Promise<StoreHarness<PendingWrites>>): void {
  const it = contractTest(make);

  it('a held write is listed for its scope only, oldest first, after a restart and a kill too', async (h) => {
    await h.store.hold(held('pw_00000002', '1', '- second', 2));
    await h.store.hold(held('pw_00000001', '1', '- first', 1));
    await h.store.hold(held('pw_00000003', '2', '- other chat', 3));
    assert.deepEqual(
      (await h.store.list('test:1', at(5))).map((w) => w.id),
      ['pw_00000001', 'pw_00000002'],
    );
    const next = await h.crash();
    assert.deepEqual(await next.list('test:1', at(5)), [held('pw_00000001', '1', '- first', 1), held('pw_00000002', '1', '- second', 2)], 'kept exactly');
    assert.deepEqual(
      (await next.list('test:2', at(5))).map((w) => w.id),
      ['pw_00000003'],
    );
  });

  it('take gives a held write once, only in its scope; then it is gone', async (h) => {
    await h.store.hold(held('pw_0000000a', '1', '- Likes tea'));
    assert.equal(await h.store.take('test:2', 'pw_0000000a', at(1)), undefined, 'not from another scope');
    const other = await h.reopen();
    const [a, b] = await Promise.all([h.store.take('test:1', 'pw_0000000a', at(1)), other.take('test:1', 'pw_0000000a', at(1))]);
    assert.equal([a, b].filter(Boolean).length, 1, 'one taker gets it');
    assert.deepEqual(a ?? b, held('pw_0000000a', '1', '- Likes tea'));
    assert.deepEqual(await h.store.list('test:1', at(1)), []);
  });

  it('a held write expires with nothing left: not listed, not taken', async (h) => {
    await h.store.hold(held('pw_0000000b', '1', '- Expiring secret words'));
    await h.store.hold(held('pw_0000000c', '1', '- Later', 60 * 24 * 6));
    const after = new Date(T0 + PENDING_TTL_MS + 1);
    assert.equal(await h.store.take('test:1', 'pw_0000000b', after), undefined);
    assert.deepEqual(
      (await h.store.list('test:1', after)).map((w) => w.id),
      ['pw_0000000c'],
    );
    if (h.holds) assert.equal(await h.holds('Expiring secret words'), false, 'no byte left of an expired write');
  });

  it("forget takes the scope's held writes whose words match, and leaves no byte of them; others stay", async (h) => {
    await h.store.hold(held('pw_0000000d', '1', '- The user owes Mallory 500 EUR.'));
    await h.store.hold(held('pw_0000000e', '1', '- Likes tea'));
    await h.store.hold(held('pw_0000000f', '2', '- Mallory is a neighbour'));
    const test = (t: string) => /mallory/i.test(t);
    assert.equal(await h.store.matching('test:1', test), 1);
    assert.equal(await h.store.forget('test:1', test), 1);
    assert.deepEqual(
      (await h.store.list('test:1', at(1))).map((w) => w.id),
      ['pw_0000000e'],
    );
    assert.deepEqual(
      (await h.store.list('test:2', at(1))).map((w) => w.id),
      ['pw_0000000f'],
      'another scope is not touched',
    );
    assert.equal(await h.store.forget('test:2', test), 1);
    if (h.holds) assert.equal(await h.holds('Mallory'), false, 'no byte of the words left');
  });

  it("purge: chats lists where held writes came from; erase deletes one chat's", async (h) => {
    await h.store.hold(held('pw_00000010', '-100:7', '- topic'));
    await h.store.hold(held('pw_00000011', '1', '- private'));
    assert.deepEqual((await h.store.chats()).sort(), ['test:-100:7', 'test:1']);
    assert.equal(await h.store.erase('test', '-100:7'), 1);
    assert.deepEqual(await h.store.chats(), ['test:1']);
    if (h.holds) assert.equal(await h.holds('- topic'), false);
  });

  it('dump → load into a fresh store → dump gives the same held writes', async (h) => {
    await h.store.hold(held('pw_00000012', '1', 'line one\nline "two" — ünïcödé', 1));
    await h.store.hold(held('pw_00000013', '2', '- x', 2));
    const fresh = await make();
    try {
      await assertMovesWhole(h.store, fresh.store);
    } finally {
      await fresh.cleanup();
    }
    assert.equal((await collect(h.store.dump())).length, 2);
  });
}
