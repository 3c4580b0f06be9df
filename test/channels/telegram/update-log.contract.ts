/**
 * What every UpdateLog (src/channels/telegram/update-log.ts) promises the Telegram channel: an
 * update is taken at most once — in this process, after a restart, and when Telegram sends it
 * again. Run against today's FileUpdateLog by update-log.test.ts; how long ids are remembered and
 * what happens to a damaged store are the implementation's own tests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { UpdateLog } from '../../../src/channels/telegram/update-log.js';
import { assertMovesWhole } from '../../helpers/portable.js';

export interface UpdateLogHandle {
  store: UpdateLog;
  /** Another log on the same stored ids, not loaded yet (the next process, after a restart). */
  reopen(): Promise<UpdateLog>;
  cleanup(): Promise<void>;
}

export function updateLogContract(name: string, make: () => Promise<UpdateLogHandle>): void {
  const t = (title: string, fn: (h: UpdateLogHandle) => Promise<void>) =>
    test(`${name} › ${title}`, async () => {
      const h = await make();
      try {
        await h.store.load();
        await fn(h);
      } finally {
        await h.cleanup();
      }
    });
  const admit = async (log: UpdateLog, ids: number[]) => [...(await log.admit(ids))];

  t('an empty log has taken nothing', async (h) => {
    assert.equal(h.store.size, 0);
    assert.equal(h.store.has(1), false);
    assert.deepEqual(await admit(h.store, []), []);
    assert.equal(h.store.size, 0);
  });

  t('risk: an update handled twice — an id is admitted once; the fresh ones come back in the order given', async (h) => {
    assert.deepEqual(await admit(h.store, [7, 5, 6]), [7, 5, 6]);
    assert.deepEqual(await admit(h.store, [6, 7, 8]), [8]);
    assert.deepEqual(await admit(h.store, [8, 8]), []);
    assert.deepEqual(await admit(h.store, [9, 9]), [9], 'an id twice in one batch is one id');
    assert.deepEqual(
      [5, 6, 7, 8, 9, 10].map((id) => h.store.has(id)),
      [true, true, true, true, true, false],
    );
    assert.equal(h.store.size, 5);
  });

  t('risk: a restart handles an update again — taken ids stay taken for the next process', async (h) => {
    await admit(h.store, [100, 101]);
    const next = await h.reopen();
    await next.load();
    assert.equal(next.has(100), true);
    assert.equal(next.has(101), true);
    assert.deepEqual(await admit(next, [101, 102]), [102]);
    const third = await h.reopen();
    await third.load();
    assert.deepEqual(await admit(third, [100, 101, 102]), []);
  });

  t('a lower id than the last is a new update (Telegram starts ids anew after a week without updates)', async (h) => {
    await admit(h.store, [5000, 5001]);
    assert.deepEqual(await admit(h.store, [3]), [3]);
    assert.equal(h.store.has(3), true);
  });

  t('batches admitted at the same time (a webhook call re-posted) each take an id once', async (h) => {
    const batches = [
      [1, 2, 3],
      [2, 3, 4],
      [3, 4, 5],
      [1, 5, 6],
    ];
    const taken = (await Promise.all(batches.map((b) => admit(h.store, b)))).flat();
    assert.deepEqual(
      taken.sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6],
    );
    const next = await h.reopen();
    await next.load();
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map((id) => next.has(id)),
      [true, true, true, true, true, true],
      'all of them are stored',
    );
  });

  t('moving between modes: the ids taken, dumped and loaded into a fresh log, are the same with their times; there they are not taken again', async (h) => {
    await h.store.admit([7, 5, 6]);
    await h.store.admit([9]);
    const fresh = await make();
    try {
      const items = await assertMovesWhole(h.store.portable(), fresh.store.portable());
      assert.deepEqual(items.map((i) => i.updateId).sort(), [5, 6, 7, 9]);
      assert.ok(items.every((i) => Number.isInteger(i.takenAt) && Math.abs(i.takenAt - Date.now()) < 3600_000));
      await fresh.store.portable().load(h.store.portable().dump());
      const there = await fresh.reopen();
      await there.load();
      assert.deepEqual(await admit(there, [6, 9, 10]), [10], 'ids moved are known there');
    } finally {
      await fresh.cleanup();
    }
  });
}
