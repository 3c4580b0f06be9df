import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runPair } from '../../src/cli/pair.js';
import { FilePairingStore, pairingFile } from '../../src/channels/telegram/pairing-file.js';
import { tempDir } from '../helpers/workspace.js';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

test('pair: list, approve a pending code, revoke; mistakes exit non-zero with what to do', async () => {
  const ws = await tempDir();
  try {
    const daemonSide = new FilePairingStore(pairingFile(ws.dir));
    const r = await daemonSide.request({ userId: '4242', username: 'eve', name: 'Eve', chatId: '4242' });
    const code = (r as { code: string }).code;

    let c = io();
    assert.equal(await runPair(['list'], ws.dir, c.io), 0);
    assert.match(c.out.join('\n'), new RegExp(`Pending codes \\(1, at most 3\\):\\n  ${code}  4242 \\(@eve, Eve\\)`));

    c = io();
    assert.equal(await runPair(['approve', 'NOPE2345'], ws.dir, c.io), 1);
    assert.match(c.err[0]!, /^pairing\.unknown_code: .*npm run pair -- list/);

    c = io();
    assert.equal(await runPair(['approve', code.toLowerCase()], ws.dir, c.io), 0);
    assert.match(c.out[0]!, /Approved 4242 \(@eve, Eve\)/);
    assert.equal(await daemonSide.isApproved('4242'), true);

    c = io();
    assert.equal(await runPair(['list'], ws.dir, c.io), 0);
    assert.match(c.out.join('\n'), /Approved users \(1\):\n {2}4242 \(@eve, Eve\)/);
    assert.match(c.out.join('\n'), /Pending codes \(0/);

    c = io();
    assert.equal(await runPair(['revoke', '@eve'], ws.dir, c.io), 0);
    assert.equal(await daemonSide.isApproved('4242'), false);
    c = io();
    assert.equal(await runPair(['revoke', '4242'], ws.dir, c.io), 1);

    for (const args of [[], ['approve'], ['frobnicate']]) {
      c = io();
      assert.equal(await runPair(args, ws.dir, c.io), 2, args.join(' '));
      assert.match(c.err.join('\n'), /usage: npm run pair -- approve <CODE>/);
    }
  } finally {
    await ws.cleanup();
  }
});

test('risk: pairing slots hogged — the owner sees the backlog (turned away, codes expired) in `pair -- list`', async () => {
  const ws = await tempDir();
  try {
    let now = Date.now();
    const daemonSide = new FilePairingStore(pairingFile(ws.dir), { now: () => now });
    for (const id of ['11', '12', '13']) await daemonSide.request({ userId: id, chatId: id });
    assert.deepEqual(await daemonSide.request({ userId: '14', username: 'dora', chatId: '14' }), { status: 'full' });
    now += 3600_000 + 1;
    await daemonSide.request({ userId: '11', chatId: '11' }); // writes again after the expiry: no new code
    // The CLI runs on the real clock, an hour before the daemon's: nothing it lists has expired yet.
    const c = io();
    assert.equal(await runPair(['list'], ws.dir, c.io), 0);
    const out = c.out.join('\n');
    assert.match(out, /Waiting \(4, last 24 hours\):/, out);
    assert.match(out, /^ {2}14 \(@dora\) {2}turned away: all 3 codes were taken/m, out);
    assert.match(out, /^ {2}11 {2}code expired unapproved; a new code from /m, out);
  } finally {
    await ws.cleanup();
  }
});

test('pair: groups approved with /allow are listed, and revoked by their id (the running daemon sees it)', async () => {
  const ws = await tempDir();
  try {
    const daemonSide = new FilePairingStore(pairingFile(ws.dir));
    assert.equal(await daemonSide.approveGroup({ chatId: '-1001234567890', title: 'Plums', by: '111' }), true);
    assert.equal(await daemonSide.approveGroup({ chatId: '-1001234567890', title: 'Plums', by: '111' }), false, 'once');
    assert.equal(await daemonSide.isGroupApproved('-1001234567890'), true);

    let c = io();
    assert.equal(await runPair(['list'], ws.dir, c.io), 0);
    assert.match(c.out.join('\n'), /Approved groups \(1, with \/allow\):\n {2}-1001234567890 \(Plums\) {2}approved .* UTC by 111/);

    c = io();
    assert.equal(await runPair(['revoke', '-1001234567890'], ws.dir, c.io), 0);
    assert.match(c.out[0]!, /^Revoked group -1001234567890: the bot stays quiet there/);
    assert.equal(await daemonSide.isGroupApproved('-1001234567890'), false);
    c = io();
    assert.equal(await runPair(['revoke', '-1001234567890'], ws.dir, c.io), 1);
    assert.match(c.err[0]!, /No approved user, group or pending code matches/);
  } finally {
    await ws.cleanup();
  }
});
