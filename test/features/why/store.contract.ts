/**
 * What every WhyStore (src/features/why/store.ts) promises: `/why` finds an answer's record by
 * the message it went out as or by its turn, or the chat's last one; a chat keeps its newest
 * KEEP_PER_CHAT; a forget takes every item holding the words out (no byte of them left where the
 * implementation can tell); purge takes a chat's records; another process and a restart see what
 * was kept; and the records move between the modes whole. Run by store.test.ts (files) and
 * store.pg.test.ts (PostgreSQL).
 */
import assert from 'node:assert/strict';
import { collect } from '../../../src/storage/portable.js';
import { KEEP_PER_CHAT, type WhyRecord } from '../../../src/features/why/record.js';
import type { WhyStore } from '../../../src/features/why/store.js';
import { contractTest, type StoreHarness } from '../../helpers/stores.js';
import { assertMovesWhole } from '../../helpers/portable.js';

export function record(chat: string, turn: string, extra: Partial<WhyRecord> = {}): WhyRecord {
  return {
    chat,
    turn,
    at: '2026-03-01T10:00:00.000Z',
    sent: [`${turn}-1`],
    items: [
      { kind: 'fact', ref: 'fact_0a1b', text: 'Marta lives in Porto' },
      { kind: 'note', text: '[09:12] User: the kiln is in the garage | Assistant: Noted  ✓ “exact” 🙂' },
      { kind: 'tool', tool: 'search_memory', ref: 'fact_0a1b', text: 'Marta lives in Porto' },
    ],
    ...extra,
  };
}

export function whyStoreContract(make: () => Promise<StoreHarness<WhyStore>>, fresh: () => Promise<StoreHarness<WhyStore>>): void {
  const t = contractTest(make);

  t('an answer is found by the message it went out as, by its turn, or as the last; another process and a restart see it', async (h) => {
    await h.store.add(record('telegram:5', 'aaaa0001', { sent: ['10', '11'] }));
    await h.store.add(record('telegram:5', 'aaaa0002', { sent: ['12'] }));
    await h.store.add(record('test:other', 'bbbb0001'));
    assert.equal((await h.store.find('telegram:5', { sent: '11' }))?.turn, 'aaaa0001');
    assert.equal((await h.store.find('telegram:5', { turn: 'aaaa0002' }))?.turn, 'aaaa0002');
    assert.equal(await h.store.find('telegram:5', { sent: '99' }), undefined);
    assert.equal(await h.store.find('test:other', { sent: '11' }), undefined, "another chat's message never finds this chat's answer");
    const other = await h.reopen();
    assert.deepEqual(await other.last('telegram:5'), record('telegram:5', 'aaaa0002', { sent: ['12'] }), 'kept exactly, text byte for byte');
    const restarted = await h.crash();
    assert.equal((await restarted.last('telegram:5'))?.turn, 'aaaa0002');
    assert.deepEqual((await restarted.chats()).sort(), ['telegram:5', 'test:other']);
  });

  t(`a chat keeps its newest ${KEEP_PER_CHAT} answers`, async (h) => {
    for (let i = 1; i <= KEEP_PER_CHAT + 3; i++) await h.store.add(record('test:1', `t${String(i).padStart(3, '0')}`));
    assert.equal(await h.store.find('test:1', { turn: 't003' }), undefined);
    assert.equal((await h.store.find('test:1', { turn: 't004' }))?.turn, 't004');
    assert.equal((await h.store.last('test:1'))?.turn, `t0${KEEP_PER_CHAT + 3}`);
  });

  t('risk: a forgotten word stays in /why — forget removes every item holding it, in that chat only, and no byte of it is left', async (h) => {
    await h.store.add(record('test:1', 'a1'));
    await h.store.add(record('test:2', 'b1'));
    assert.equal(await h.store.forget('test:1', (t) => t.includes('Porto')), 2);
    const left = await h.store.last('test:1');
    assert.deepEqual(
      left?.items.map((i) => i.kind),
      ['note'],
    );
    assert.equal((await h.store.last('test:2'))?.items.length, 3, 'the other chat is untouched');
    await h.store.forget('test:2', (t) => t.includes('Porto'));
    if (h.holds) assert.equal(await h.holds('Porto'), false, 'no byte of the words left');
    assert.equal(await h.store.forget('test:1', (t) => t.includes('Porto')), 0);
  });

  t("purge: a chat's records go, the others stay", async (h) => {
    await h.store.add(record('test:1', 'a1'));
    await h.store.add(record('test:1', 'a2'));
    await h.store.add(record('test:2', 'b1'));
    assert.equal(await h.store.deleteChat('test:1'), 2);
    assert.equal(await h.store.last('test:1'), undefined);
    assert.deepEqual(await h.store.chats(), ['test:2']);
    if (h.holds) assert.equal(await h.holds('a2'), false);
  });

  t('dump → load into a fresh store → dump gives the same records', async (h) => {
    await h.store.add(record('test:1', 'a1'));
    await h.store.add(record('telegram:-100:7', 'c1', { sent: [], items: [] }));
    await h.store.add(record('test:1', 'a2'));
    const target = await fresh();
    try {
      await assertMovesWhole(h.store, target.store);
      assert.equal((await collect(h.store.dump())).length, 3);
    } finally {
      await target.cleanup();
    }
  });
}
