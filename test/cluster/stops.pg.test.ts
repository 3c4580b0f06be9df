/**
 * /stop across processes (src/cluster/stops.ts): the process that receives it asks the one
 * holding the chat's claim, through NOTIFY, and words what that one did.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatClaims } from '../../src/cluster/claims.js';
import { ClusterStops, type StopBy } from '../../src/cluster/stops.js';
import { ChatStops } from '../../src/dispatch/stop.js';
import { PgInbox } from '../../src/queue/inbox-pg.js';
import { silentLogger } from '../../src/core/log.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { killDatabase, migratedDatabase, testDatabase } from '../helpers/pg-stores.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

const chat = { channel: 'telegram', chatId: '42' };
const key = 'telegram:42';
const owner: StopBy = { userId: 'u1', role: 'owner' };

test("risk: /stop reaches a process that runs nothing of the chat — it stops the turn in the process holding the chat's claim", async () => {
  const url = await migratedDatabase(cluster);
  const [dbA, dbB] = [testDatabase(url), testDatabase(url)];
  const [claimsA, claimsB] = [new ChatClaims(dbA, 'a', 60_000), new ChatClaims(dbB, 'b', 60_000)];
  // a runs the chat's turn: its ChatStops has the turn under way.
  const localA = new ChatStops();
  const turn = localA.enter(key, 'u1');
  let stoppedInA = false;
  turn.stopTurn = () => ((stoppedInA = true), 'stopped');
  const localB = new ChatStops();
  const stopsA = await ClusterStops.open(dbA, claimsA, (k, by) => localA.stop(k, by), { log: silentLogger() });
  const stopsB = await ClusterStops.open(dbB, claimsB, (k, by) => localB.stop(k, by), { log: silentLogger() });
  try {
    const inbox = new PgInbox(dbB, silentLogger());
    await inbox.accept({ channel: 'telegram', chatId: '42', userId: 'u1', userName: 'U', text: 'write a long essay', receivedAt: new Date() }).durable;
    await waitClaimed(claimsA);
    // The /stop arrives at b (the poller, say).
    const result = await stopsB.stop(chat, key, owner);
    assert.equal(stoppedInA, true, 'the turn in a was stopped');
    assert.deepEqual(result, { where: 'holder', outcome: { turn: 'stopped', skipped: 0, command: undefined } });
    assert.match(localB.text(result.outcome), /^Stopped\./);
    // In the holder itself, and for a chat nobody holds, it stops here.
    assert.equal((await stopsA.stop(chat, key, owner)).where, 'here');
    assert.equal((await stopsB.stop({ channel: 'telegram', chatId: '43' }, 'telegram:43', owner)).where, 'here');
  } finally {
    stopsA.close();
    stopsB.close();
    await dbA.close();
    await dbB.close();
  }
});

test('a holder that does not answer (killed) leaves the /stop unreached, said so, not waited on forever', async () => {
  const url = await migratedDatabase(cluster);
  const [dbA, dbB] = [testDatabase(url), testDatabase(url)];
  const [claimsA, claimsB] = [new ChatClaims(dbA, 'a', 60_000), new ChatClaims(dbB, 'b', 60_000)];
  const stopsB = await ClusterStops.open(dbB, claimsB, () => ({ turn: 'none', skipped: 0, command: undefined }), { log: silentLogger(), waitMs: 300 });
  try {
    const inbox = new PgInbox(dbA, silentLogger());
    await inbox.accept({ channel: 'telegram', chatId: '42', userId: 'u1', userName: 'U', text: 'hello', receivedAt: new Date() }).durable;
    await waitClaimed(claimsA);
    await killDatabase(dbA, url);
    assert.equal((await stopsB.stop(chat, key, owner)).where, 'unreached');
  } finally {
    stopsB.close();
    await dbB.close();
  }
});

async function waitClaimed(claims: ChatClaims): Promise<void> {
  for (let i = 0; i < 100 && (await claims.claimWork()).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(claims.holds(chat), 'the chat is claimed');
}
