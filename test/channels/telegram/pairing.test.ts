import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { FilePairingStore, pairingFile } from '../../../src/channels/telegram/pairing-file.js';
import { CODE_LENGTH } from '../../../src/channels/telegram/pairing.js';
import { AccessControl } from '../../../src/channels/telegram/access.js';
import { silentLogger } from '../../../src/core/log.js';
import { captureLog, tempDir } from '../../helpers/workspace.js';
import { pairingContract } from './pairing.contract.js';

pairingContract('FilePairingStore', async (opts) => {
  const ws = await tempDir();
  const open = () => FilePairingStore.inWorkspace(ws.dir, opts);
  return { store: open(), another: async () => open(), cleanup: () => ws.cleanup() };
});

const stranger = (id: number) => ({ userId: String(id), username: `user${id}`, chatId: String(id) });

test('a stranger gets one 8-character code; asking again returns the same code; approval persists', async () => {
  const ws = await tempDir();
  try {
    const store = new FilePairingStore(pairingFile(ws.dir));
    const first = await store.request(stranger(5));
    assert.equal(first.status, 'created');
    const code = (first as { code: string }).code;
    assert.match(code, new RegExp(`^[A-Z2-9]{${CODE_LENGTH}}$`));
    assert.deepEqual(await store.request(stranger(5)), { status: 'pending', code, expiresAt: (first as { expiresAt: string }).expiresAt });

    assert.equal(await store.isApproved('5'), false);
    // Approved by another process (the CLI): a fresh store on the same file.
    const approved = await new FilePairingStore(pairingFile(ws.dir)).approve(` ${code.toLowerCase()} `);
    assert.equal(approved?.userId, '5');
    assert.equal(await store.isApproved('5'), true, 'the running daemon sees the approval');
    assert.equal(await new FilePairingStore(pairingFile(ws.dir)).approve(code), null, 'a code works once');

    const onDisk = JSON.parse(await readFile(pairingFile(ws.dir), 'utf8'));
    assert.deepEqual(onDisk.pending, []);
    assert.equal(onDisk.approved[0].userId, '5');

    assert.equal(await store.revoke('@USER5'), true);
    assert.equal(await store.isApproved('5'), false);
    assert.equal(await store.revoke('5'), false);
  } finally {
    await ws.cleanup();
  }
});

test('codes expire after an hour, and at most 3 are pending at once', async () => {
  const ws = await tempDir();
  try {
    let now = Date.parse('2026-03-01T10:00:00Z');
    const store = new FilePairingStore(pairingFile(ws.dir), { now: () => now });
    const codes = [];
    for (const id of [1, 2, 3]) codes.push(((await store.request(stranger(id))) as { code: string }).code);
    assert.equal(new Set(codes).size, 3);
    assert.deepEqual(await store.request(stranger(4)), { status: 'full' });

    now += 3600_000 + 1;
    assert.equal(await store.approve(codes[0]!), null, 'an expired code cannot be approved');
    assert.equal((await store.request(stranger(4))).status, 'created', 'expired codes free their places');
    assert.equal((await store.list()).pending.length, 1);
  } finally {
    await ws.cleanup();
  }
});

test('access: listed users and open policy pass; strangers get a code once; allowlist refuses once; groups need listing', async () => {
  const ws = await tempDir();
  try {
    const pairing = new FilePairingStore(pairingFile(ws.dir));
    const base = { allowedUsers: ['10', 'alice'], allowedGroups: ['-100'], pairing, log: silentLogger() };
    const pairingAccess = new AccessControl({ ...base, dmPolicy: 'pairing' });
    const dm = (userId: string, username?: string) => ({ userId, username, chatId: userId, chatType: 'private' as const });

    assert.deepEqual(await pairingAccess.check(dm('10')), { allow: true });
    assert.deepEqual(await pairingAccess.check(dm('11', 'Alice')), { allow: true }, 'by username, any case');
    const first = await pairingAccess.check(dm('12'));
    assert.equal(first.allow, false);
    assert.match((first as { reply: string }).reply, /pairing code: [A-Z2-9]{8}/);
    const again = await pairingAccess.check(dm('12'));
    assert.equal(again.allow, false);
    assert.equal((again as { reply?: string }).reply, undefined, 'the code is sent once');

    const allowlist = new AccessControl({ ...base, dmPolicy: 'allowlist' });
    const refused = await allowlist.check(dm('13'));
    assert.equal(refused.allow, false);
    assert.match((refused as { reply: string }).reply, /private/);
    assert.equal(((await allowlist.check(dm('13'))) as { reply?: string }).reply, undefined, 'refused once, then silence');

    const open = new AccessControl({ ...base, dmPolicy: 'open' });
    assert.deepEqual(await open.check(dm('14')), { allow: true });

    assert.deepEqual(await open.check({ userId: '14', chatId: '-100', chatType: 'group' }), { allow: true });
    assert.equal((await open.check({ userId: '10', chatId: '-200', chatType: 'supergroup' })).allow, false, 'unlisted group, even for a listed user');
  } finally {
    await ws.cleanup();
  }
});

test('access fails closed when the pairing file is unreadable', async () => {
  const ws = await tempDir();
  try {
    await mkdir(path.dirname(pairingFile(ws.dir)), { recursive: true });
    await writeFile(pairingFile(ws.dir), '{ not json');
    const logs = captureLog();
    const access = new AccessControl({
      dmPolicy: 'pairing',
      allowedUsers: [],
      allowedGroups: [],
      pairing: new FilePairingStore(pairingFile(ws.dir)),
      log: logs.log,
    });
    const r = await access.check({ userId: '5', chatId: '5', chatType: 'private' });
    // Refused because the file is unreadable — not taken for a stranger and sent a pairing code.
    assert.deepEqual(r, { allow: false, reason: 'pairing store unavailable' }, 'no reply: nothing is sent to the sender');
    assert.equal(await readFile(pairingFile(ws.dir), 'utf8'), '{ not json', 'the file is left as it was (no code written over it)');
    const errors = logs.lines().filter((l) => l.level === 50);
    assert.equal(errors.length, 1);
    assert.match(errors[0]!.msg, /pairing check failed; message refused/);
  } finally {
    await ws.cleanup();
  }
});

test('risk: pairing slots hogged — strangers who keep writing do not renew their codes, so a newcomer gets a slot', async () => {
  const ws = await tempDir();
  try {
    let now = Date.parse('2026-03-01T10:00:00Z');
    const store = new FilePairingStore(pairingFile(ws.dir), { now: () => now });
    for (const id of [1, 2, 3]) assert.equal((await store.request(stranger(id))).status, 'created');
    // The three hoggers write every few minutes, right through the expiry of their codes.
    for (let minutes = 0; minutes <= 180; minutes += 7) {
      now = Date.parse('2026-03-01T10:00:00Z') + minutes * 60_000;
      for (const id of [1, 2, 3]) {
        const r = await store.request(stranger(id));
        assert.ok(r.status !== 'created' || minutes === 0, `stranger ${id} got a new code at +${minutes} min`);
      }
    }
    const newcomer = await store.request(stranger(4));
    assert.equal(newcomer.status, 'created', 'the slots freed by expired codes go to someone new');
    // A day later the hoggers may ask again (a lost code is not a ban for ever).
    now += 24 * 3600_000 + 1;
    assert.equal((await store.request(stranger(1))).status, 'created');
  } finally {
    await ws.cleanup();
  }
});

test('risk: pairing slots hogged — each new stranger no longer makes the bot send a message: refusals are capped per hour', async () => {
  const ws = await tempDir();
  try {
    let now = Date.parse('2026-03-01T10:00:00Z');
    const pairing = new FilePairingStore(pairingFile(ws.dir), { now: () => now });
    const access = new AccessControl({ dmPolicy: 'pairing', allowedUsers: [], allowedGroups: [], pairing, log: silentLogger(), now: () => now });
    const dm = (id: number) => ({ userId: String(id), chatId: String(id), chatType: 'private' as const });
    let replies = 0;
    for (let id = 1; id <= 60; id++) {
      now += 30_000;
      if (((await access.check(dm(id))) as { reply?: string }).reply) replies++;
    }
    // 3 codes, then at most MAX_REFUSALS_PER_HOUR "no room" messages within the hour.
    assert.ok(replies <= 3 + 10, `${replies} messages sent to 60 strangers in 30 minutes`);
    assert.ok(replies >= 4, 'the first refused strangers are still told');
    const allowlist = new AccessControl({ dmPolicy: 'allowlist', allowedUsers: ['1'], allowedGroups: [], pairing, log: silentLogger(), now: () => now });
    let refusals = 0;
    for (let id = 100; id < 160; id++) if (((await allowlist.check(dm(id))) as { reply?: string }).reply) refusals++;
    assert.equal(refusals, 10);
    now += 3600_000 + 1;
    assert.ok(((await allowlist.check(dm(200))) as { reply?: string }).reply, 'the cap is per hour');
  } finally {
    await ws.cleanup();
  }
});
