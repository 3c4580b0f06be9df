/**
 * What every PairingStore (src/channels/telegram/pairing.ts) promises: the daemon hands out
 * codes and asks who is approved, the `pair` command approves and revokes from another process,
 * and both see each other's changes at their next call. Run against today's FilePairingStore by
 * pairing.test.ts; an unreadable file is the implementation's own test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CODE_LENGTH, type PairingData, type PairingOptions, type PairingRequestResult, type PairingStore } from '../../../src/channels/telegram/pairing.js';
import { collect, type Portable } from '../../../src/storage/portable.js';
import { assertMovesWhole } from '../../helpers/portable.js';

export interface PairingHandle {
  /** Asked by the daemon, and moved between the modes (`npm run memory -- migrate`). */
  store: PairingStore & Portable<PairingData>;
  /** Another store on the same record, with the same options (the `pair` command, or a restart). */
  another(): Promise<PairingStore>;
  cleanup(): Promise<void>;
}

const HOUR = 3600_000;
const stranger = (id: number) => ({ userId: String(id), username: `User${id}`, name: `Stranger ${id}`, chatId: String(id) });
const codeOf = (r: PairingRequestResult) => {
  assert.ok(r.status === 'created' || r.status === 'pending', `a code, not ${r.status}`);
  return r.code;
};

export function pairingContract(name: string, make: (opts: PairingOptions) => Promise<PairingHandle>): void {
  const t = (title: string, fn: (h: PairingHandle, clock: { now: number }) => Promise<void>) =>
    test(`${name} › ${title}`, async () => {
      const clock = { now: Date.parse('2026-03-01T10:00:00Z') };
      const h = await make({ now: () => clock.now });
      try {
        await fn(h, clock);
      } finally {
        await h.cleanup();
      }
    });

  t('a stranger gets one code and the same code again; the owner approves it from another process and the daemon lets them in', async (h) => {
    const first = await h.store.request(stranger(5));
    assert.equal(first.status, 'created');
    const code = codeOf(first);
    assert.match(code, new RegExp(`^[A-Z2-9]{${CODE_LENGTH}}$`));
    assert.deepEqual(await h.store.request(stranger(5)), { ...first, status: 'pending' });
    assert.equal(await h.store.isApproved('5'), false);

    const owner = await h.another();
    const approved = await owner.approve(` ${code.toLowerCase().slice(0, 4)} ${code.toLowerCase().slice(4)} `);
    assert.equal(approved?.userId, '5');
    assert.equal(approved?.username, 'User5');
    assert.equal(await h.store.isApproved('5'), true, "the daemon sees the other process's approval at its next call");
    assert.equal(await owner.approve(code), null, 'a code works once');
    assert.equal(await h.store.approve('ZZZZZZZZ'), null, 'an unknown code approves nobody');
    assert.deepEqual(await h.store.request(stranger(5)), { status: 'approved' });
    const list = await (await h.another()).list();
    assert.deepEqual(
      list.approved.map((a) => a.userId),
      ['5'],
    );
    assert.deepEqual(list.pending, []);
  });

  t('revoke by user id or @username in any case: no longer let in; a pending code is withdrawn; nothing to revoke is false', async (h) => {
    await h.store.approve(codeOf(await h.store.request(stranger(1))));
    await h.store.approve(codeOf(await h.store.request(stranger(2))));
    const pending = codeOf(await h.store.request(stranger(3)));
    const owner = await h.another();
    assert.equal(await owner.revoke('@USER1'), true);
    assert.equal(await owner.revoke(' 2 '), true);
    assert.equal(await owner.revoke('user3'), true);
    assert.equal(await h.store.isApproved('1'), false);
    assert.equal(await h.store.isApproved('2'), false);
    assert.equal(await h.store.approve(pending), null, 'the withdrawn code no longer works');
    assert.equal(await owner.revoke('1'), false);
    assert.equal(await owner.revoke('@nobody'), false);
    assert.equal((await h.store.request(stranger(1))).status, 'created', 'a revoked user may ask again');
  });

  t('risk: pairing slots hogged — at most 3 codes at once; an expired code frees its slot, is not approved, and its user waits a day', async (h, clock) => {
    const codes = [];
    for (const id of [1, 2, 3]) codes.push(codeOf(await h.store.request(stranger(id))));
    assert.equal(new Set(codes).size, 3, 'codes are distinct');
    assert.deepEqual(await h.store.request(stranger(4)), { status: 'full' });
    let list = await h.store.list();
    assert.deepEqual(
      list.waiting.map((w) => [w.userId, w.reason]),
      [['4', 'full']],
      'the stranger turned away is listed',
    );

    clock.now += HOUR + 1;
    assert.equal(await h.store.approve(codes[0]!), null, 'an expired code cannot be approved');
    const again = await h.store.request(stranger(1));
    assert.equal(again.status, 'cooldown', 'its user does not get a new code at once');
    assert.equal(codeOf(await h.store.request(stranger(4))).length, CODE_LENGTH, 'the freed slot goes to someone new');
    list = await h.store.list();
    assert.deepEqual(
      list.pending.map((p) => p.userId),
      ['4'],
    );
    assert.deepEqual(new Set(list.waiting.map((w) => `${w.userId}:${w.reason}`)), new Set(['1:expired', '2:expired', '3:expired']));

    clock.now += 24 * HOUR + 1;
    assert.equal((await h.store.request(stranger(1))).status, 'created', 'a day later they may ask again');
  });

  t('risk: two processes hand out more codes than slots — requests at the same time never pass the cap, and every code is distinct', async (h) => {
    const other = await h.another();
    const results = await Promise.all([1, 2, 3, 4, 5, 6].map((id) => (id % 2 ? h.store : other).request(stranger(id))));
    const created = results.filter((r) => r.status === 'created');
    assert.equal(created.length, 3);
    assert.equal(results.filter((r) => r.status === 'full').length, 3);
    assert.equal(new Set(created.map(codeOf)).size, 3);
    assert.equal((await h.store.list()).pending.length, 3, 'all three are stored');
  });

  t('groups: /allow approves a group once, it is served in every process, and revoking its id takes it back', async (h) => {
    assert.equal(await h.store.isGroupApproved('-1001'), false);
    assert.equal(await h.store.approveGroup({ chatId: '-1001', title: 'Climbers', by: '7' }), true);
    assert.equal(await h.store.approveGroup({ chatId: '-1001', title: 'Climbers', by: '8' }), false, 'already approved');
    const owner = await h.another();
    assert.equal(await owner.isGroupApproved('-1001'), true);
    const [group] = (await owner.list()).groups;
    assert.equal(group?.chatId, '-1001');
    assert.equal(group?.title, 'Climbers');
    assert.equal(group?.approvedBy, '7');
    assert.equal(await h.store.isApproved('-1001'), false, 'a group is not a user');
    assert.equal(await owner.revoke('-1001'), true);
    assert.equal(await h.store.isGroupApproved('-1001'), false);
    assert.deepEqual((await h.store.list()).groups, []);
  });

  t("an unserved group's owner is told once, in any process — and again after the group's approval is revoked", async (h) => {
    assert.equal(await h.store.markTold({ chatId: '-2002', title: 'Book club' }), true);
    assert.equal(await h.store.markTold({ chatId: '-2002' }), false);
    assert.equal(await (await h.another()).markTold({ chatId: '-2002' }), false, 'also after a restart');
    assert.equal(await h.store.markTold({ chatId: '-3003' }), true, 'another group is told');
    await h.store.approveGroup({ chatId: '-2002', by: '7' });
    await h.store.revoke('-2002');
    assert.equal(await h.store.markTold({ chatId: '-2002' }), true);
  });

  t(
    'moving between modes: the whole record, dumped and loaded into a fresh store, is the same there (fields in the same order); clear empties it',
    async (h, clock) => {
      await h.store.approve(codeOf(await h.store.request(stranger(1))));
      for (const id of [2, 3, 4, 5]) await h.store.request(stranger(id));
      await h.store.approveGroup({ chatId: '-1001', title: 'Climbers', by: '1' });
      await h.store.markTold({ chatId: '-2002', title: 'Book club' });
      const fresh = await make({ now: () => clock.now });
      try {
        const [record] = await assertMovesWhole(h.store, fresh.store);
        assert.deepEqual(
          [record!.approved.length, record!.pending.length, record!.waiting.length, record!.groups.length, record!.told.length],
          [1, 3, 1, 1, 1],
        );
        await fresh.store.load(h.store.dump());
        assert.equal(JSON.stringify(await collect(fresh.store.dump())), JSON.stringify([record]), 'each entry as written, key order included');
        assert.equal(await fresh.store.isApproved('1'), true, 'in force there');
        assert.equal(await fresh.store.isGroupApproved('-1001'), true);
        assert.equal((await fresh.store.request(stranger(2))).status, 'pending', 'a code handed out stays the same');
      } finally {
        await fresh.cleanup();
      }
    },
  );
}
