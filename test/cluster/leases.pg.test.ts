/**
 * Several processes on one database (src/cluster/): the process registry and its heartbeat,
 * named leases decided by the database's clock, the nightly jobs' gate, what /status shows, and
 * joinCluster, which renews a process's leases and claims at each heartbeat.
 * Each process is a Database of its own; `killDatabase` is what kill -9 does to its connections.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Leases, listLeases } from '../../src/cluster/leases.js';
import { ProcessRegistry, listProcesses } from '../../src/cluster/registry.js';
import { jobGate } from '../../src/cluster/gates.js';
import { clusterCheck, clusterLines, clusterReport } from '../../src/cluster/status.js';
import { joinCluster } from '../../src/cluster/cluster.js';
import { PgInbox } from '../../src/queue/inbox-pg.js';
import { Scheduler } from '../../src/app/jobs.js';
import { Upkeep } from '../../src/index/upkeep/upkeep.js';
import { SqliteMemoryIndex } from '../../src/index/sqlite-memory-index.js';
import { LlmClient } from '../../src/llm/client.js';
import { silentLogger } from '../../src/core/log.js';
import type { Database } from '../../src/storage/pg/database.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { killDatabase, migratedDatabase, testDatabase } from '../helpers/pg-stores.js';
import { waitFor } from '../helpers/wait.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { captureLog, tempDir, testConfig } from '../helpers/workspace.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

/** Databases opened by a test, closed at its end (a killed one is closed already). */
async function processes(n: number): Promise<{ url: string; dbs: Database[]; close: () => Promise<void> }> {
  const url = await migratedDatabase(cluster);
  const dbs = Array.from({ length: n }, () => testDatabase(url));
  return { url, dbs, close: () => Promise.all(dbs.map((d) => d.close().catch(() => undefined))).then(() => undefined) };
}

test('risk: two processes both poll or run a job — one holds a lease, the other gets it only once the holder is killed and its lease expired', async () => {
  const p = await processes(2);
  try {
    const [a, b] = [new Leases(p.dbs[0]!, 'proc-a', 1_500), new Leases(p.dbs[1]!, 'proc-b', 1_500)];
    assert.equal(await a.take('channel-polling'), true);
    assert.equal(await b.take('channel-polling'), false, 'held by a');
    assert.equal(await a.take('channel-polling'), true, 'the holder taking it again renews it');
    assert.ok(a.holds('channel-polling') && !b.holds('channel-polling'));
    const before = (await listLeases(p.dbs[1]!))[0]!;
    await killDatabase(p.dbs[0]!, p.url);
    // b keeps asking, as the poll gate does, until the database's clock says a's lease is over.
    await waitFor(() => b.take('channel-polling'), 10_000, "b to take the killed holder's lease");
    const now = (await listLeases(p.dbs[1]!))[0]!;
    assert.equal(now.holder, 'proc-b');
    assert.equal(now.token, before.token + 1, 'a new holder has a new fencing number');
    assert.equal(await b.renew('channel-polling'), true);
  } finally {
    await p.close();
  }
});

test("risk: machines whose clocks disagree both hold a lease — the database's clock decides, a process's own clock never does", async () => {
  const p = await processes(2);
  try {
    // b's clock runs an hour ahead: it still cannot take a lease a holds by the database's clock.
    const a = new Leases(p.dbs[0]!, 'proc-a', 60_000);
    const b = new Leases(p.dbs[1]!, 'proc-b', 60_000, () => performance.now() + 3600_000);
    assert.equal(await a.take('job:decay'), true);
    assert.equal(await b.take('job:decay'), false);
    // a's clock stops counting (frozen, or cut off): locally it stops holding it before the database lets anyone else take it.
    let frozenAt = performance.now();
    const c = new Leases(p.dbs[1]!, 'proc-c', 60_000, () => frozenAt);
    assert.equal(await c.take('lease-c'), true);
    frozenAt += 60_000;
    assert.equal(c.holds('lease-c'), false, 'a lease counts as held locally only until leaseMs after its renewal was sent');
    assert.equal(await a.take('lease-c'), false, 'while the database still has it live');
  } finally {
    await p.close();
  }
});

test('a released lease is taken by another process at once; a release stops it counting as held first', async () => {
  const p = await processes(2);
  try {
    const [a, b] = [new Leases(p.dbs[0]!, 'proc-a', 60_000), new Leases(p.dbs[1]!, 'proc-b', 60_000)];
    assert.equal(await a.take('channel-polling'), true);
    await a.release('channel-polling');
    assert.equal(a.holds('channel-polling'), false);
    assert.equal(await a.renew('channel-polling'), false, 'a released lease is not renewed back');
    assert.equal(await b.take('channel-polling'), true);
  } finally {
    await p.close();
  }
});

test('risk: every process runs the nightly jobs — their crons fire together, each job runs once, in one process', async () => {
  const p = await processes(3);
  const ws = await tempDir();
  const llm = await startFakeLlm();
  const indexes: SqliteMemoryIndex[] = [];
  try {
    const logs = p.dbs.map(() => captureLog());
    const schedulers = p.dbs.map((db, i) => {
      const index = new SqliteMemoryIndex(path.join(ws.dir, `memory-${i}.db`), silentLogger());
      indexes.push(index);
      const upkeep = new Upkeep(index, new LlmClient(testConfig({ OPENAI_BASE_URL: llm.url }), silentLogger()), silentLogger());
      return new Scheduler(upkeep, 'UTC', logs[i]!.log, jobGate(new Leases(db, `proc-${i}`, 60_000)));
    });
    const runs = await Promise.all(schedulers.map((s) => s.runScheduled('decay')));
    assert.equal(runs.filter((r) => r !== null).length, 1, 'decay ran in one process');
    assert.equal(logs.filter((l) => /decay runs in another process this time/.test(l.text())).length, 2);
    // Fired again the same night (a cron a few seconds late, a restarted process): not run again.
    const again = await Promise.all(schedulers.map((s) => s.runScheduled('decay')));
    assert.ok(
      again.every((r) => r === null),
      'once a night, even after the first run ended',
    );
    // Without a gate (one process) it always runs.
    const alone = new Scheduler(
      new Upkeep(indexes[0]!, new LlmClient(testConfig({ OPENAI_BASE_URL: llm.url }), silentLogger()), silentLogger()),
      'UTC',
      silentLogger(),
    );
    assert.ok(await alone.runScheduled('decay'));
  } finally {
    for (const i of indexes) i.close();
    await llm.close();
    await ws.cleanup();
    await p.close();
  }
});

test('the registry: each process is listed with its heartbeat; a killed one stops being alive within the lease time, a stopped one is gone with its leases at once', async () => {
  const p = await processes(3);
  try {
    const opts = { leaseMs: 1_500, version: '0.1.0', log: silentLogger(), beatMs: 60_000 };
    const [a, b, c] = await Promise.all(p.dbs.map((db, i) => ProcessRegistry.start(db, { ...opts, host: `host-${i}`, pid: 100 + i })));
    const leases = [new Leases(p.dbs[0]!, a!.id, 1_500), new Leases(p.dbs[1]!, b!.id, 1_500)];
    a!.onBeat(async () => void (await leases[0]!.renewAll()));
    assert.ok(await leases[0]!.take('channel-polling'));
    assert.ok(await leases[1]!.take('job:decay'));
    const listed = await listProcesses(p.dbs[2]!, 1_500);
    assert.deepEqual(listed.map((x) => x.host).sort(), ['host-0', 'host-1', 'host-2']);
    assert.ok(listed.every((x) => x.alive && x.version === '0.1.0'));

    // b stops cleanly: its row goes and its lease is free at once.
    await b!.stop();
    assert.ok(await new Leases(p.dbs[2]!, c!.id, 60_000).take('job:decay'), "a stopped process's lease is taken without waiting");
    // a is killed: it stays listed, no longer alive once its heartbeat is older than the lease time.
    await a!.beat();
    await killDatabase(p.dbs[0]!, p.url);
    await waitFor(async () => (await listProcesses(p.dbs[2]!, 1_500)).find((x) => x.id === a!.id)?.alive === false, 10_000, 'a to be seen dead');
    await c!.beat();
    // Its lease ends by the database's clock a moment after its heartbeat (renewed just after it).
    await waitFor(
      async () => !(await clusterReport(p.dbs[2]!, 1_500)).leases.some((l) => l.name === 'channel-polling' && l.live),
      10_000,
      "a's lease to expire",
    );
    const report = await clusterReport(p.dbs[2]!, 1_500);
    assert.deepEqual(
      report.processes.map((x) => [x.id, x.alive]).sort(),
      [
        [a!.id, false],
        [c!.id, true],
      ].sort(),
    );
    const lines = clusterLines(report, c!.id).join('\n');
    assert.match(lines, /^Processes: 1 alive, 1 not answering/);
    assert.match(lines, new RegExp(`job:decay: ${c!.id} \\(host-2:102, this one\\)`));
    assert.doesNotMatch(lines, /channel-polling/, "a dead process's expired lease is not shown as held");
    assert.deepEqual(clusterCheck(report), {
      name: 'cluster',
      status: 'ok',
      detail: `1 process alive (${c!.id} host-2:102 v0.1.0); leases: job:decay by ${c!.id}`,
    });
    await c!.stop();
  } finally {
    await p.close();
  }
});

test('risk: a working process loses its lease and chats to another while it lives — its heartbeat renews both; leaving the cluster frees them at once', async () => {
  const p = await processes(2);
  try {
    const opts = { leaseMs: 1_000, version: 'test', log: silentLogger(), beatMs: 200 };
    const [a, b] = [await joinCluster(p.dbs[0]!, opts), await joinCluster(p.dbs[1]!, opts)];
    const inbox = new PgInbox(p.dbs[0]!, silentLogger());
    await inbox.accept({ channel: 'telegram', chatId: '1', userId: 'u', userName: 'U', text: 'hi', receivedAt: new Date() }).durable;
    assert.equal((await a.claims.claimWork()).length, 1);
    assert.ok(await a.leases.take('channel-polling'));
    const { rows } = await p.dbs[0]!.query<{ t: Date }>("SELECT now() + interval '3 seconds' AS t");
    // Three lease times by the database's clock: b never gets either.
    await waitFor(
      async () => {
        assert.equal(await b.leases.take('channel-polling'), false);
        assert.deepEqual(await b.claims.claimWork(), []);
        return (await p.dbs[1]!.query<{ past: boolean }>('SELECT now() > $1 AS past', [rows[0]!.t])).rows[0]!.past;
      },
      20_000,
      'three lease times to pass',
    );
    assert.match((await b.statusLines()).join('\n'), /channel-polling: \w+ \(.*\)/);
    await a.stop();
    assert.ok(await b.leases.take('channel-polling'), 'free at once');
    assert.deepEqual(
      (await b.claims.claimWork()).map((e) => [e.msg.text, e.takenOver]),
      [['hi', false]],
    );
    await b.stop();
  } finally {
    await p.close();
  }
});
