/**
 * The PostgreSQL session log with several daemon processes on one database (issue 36): each
 * process's lines carry its cluster id (sessions/pg/log.ts), and a start takes only the lines of
 * processes no longer alive — never a running one's, whose note lines and index rows are still
 * being written from them — and takes each line once, even when two processes start together.
 * Each process is a Database of its own, registered as the daemon registers (ProcessRegistry,
 * its heartbeat beaten by hand); a kill cuts its connections and ages its heartbeat past the lease.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PgSessionStore } from '../../src/sessions/pg-store.js';
import { PgChatNames } from '../../src/sessions/names-pg.js';
import { makeMessage } from '../../src/sessions/model.js';
import type { WalLine } from '../../src/sessions/store.js';
import { ProcessRegistry } from '../../src/cluster/registry.js';
import { silentLogger } from '../../src/core/log.js';
import type { Database } from '../../src/storage/pg/database.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { killDatabase, migratedDatabase, testDatabase } from '../helpers/pg-stores.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

/** Long enough that no process of a test dies by itself: a death is made by hand (`kill`). */
const LEASE_MS = 600_000;

interface Proc {
  db: Database;
  registry: ProcessRegistry;
  store: PgSessionStore;
  killed: boolean;
}

/** A daemon process's start on the database: registered first, then its sessions opened with its id. */
async function start(url: string, opened: Proc[]): Promise<Proc> {
  const db = testDatabase(url);
  const registry = await ProcessRegistry.start(db, { leaseMs: LEASE_MS, version: 'test', log: silentLogger(), beatMs: 3_600_000 });
  const store = new PgSessionStore(db, new PgChatNames(db, silentLogger()), silentLogger(), { run: registry.id, leaseMs: LEASE_MS });
  const p = { db, registry, store, killed: false };
  opened.push(p);
  await store.init();
  return p;
}

/** kill -9: its connections cut, and its last heartbeat older than the lease time. */
async function kill(p: Proc, url: string): Promise<void> {
  p.killed = true;
  await killDatabase(p.db, url);
  const admin = testDatabase(url);
  try {
    await admin.query("UPDATE cluster_processes SET heartbeat_at = now() - interval '1 hour' WHERE id = $1", [p.registry.id]);
  } finally {
    await admin.close();
  }
}

async function stopAll(opened: Proc[]): Promise<void> {
  for (const p of opened) {
    if (p.killed) continue;
    await p.store.close().catch(() => undefined);
    await p.registry.stop().catch(() => undefined);
    await p.db.close().catch(() => undefined);
  }
}

const texts = (lines: WalLine[]) => lines.flatMap((l) => l.messages.map((m) => m.content));

async function turn(p: Proc, chatId: string, question: string): Promise<void> {
  const w = p.store.writer(await p.store.getOrCreate('test', chatId));
  await w.append(makeMessage('user', question));
  await w.append(makeMessage('assistant', `answer to ${question}`));
}

async function linesOf(url: string): Promise<Array<{ run: string; n: number }>> {
  const admin = testDatabase(url);
  try {
    const { rows } = await admin.query<{ run: string; n: number }>('SELECT run, count(*)::int AS n FROM session_log GROUP BY run ORDER BY run');
    return rows;
  } finally {
    await admin.close();
  }
}

test("risk: a process starting beside a running one replays and deletes the running one's session log — its lines stay until it is dead, then the next start takes them once", async () => {
  const url = await migratedDatabase(cluster);
  const opened: Proc[] = [];
  try {
    const a = await start(url, opened);
    await turn(a, 'k', 'one');
    await turn(a, 'k', 'two');

    // b starts while a runs: a's turns are a's to rebuild from, not b's.
    const b = await start(url, opened);
    assert.deepEqual(b.store.takeLastRun(), [], "b replays none of a running process's lines");
    await b.store.forgetLog();
    assert.deepEqual(await linesOf(url), [{ run: a.registry.id, n: 4 }], "b's start leaves a's lines in session_log");

    // a is killed: the next two starts, at once, take its lines — each line once.
    await kill(a, url);
    const [c, d] = await Promise.all([start(url, opened), start(url, opened)]);
    const taken = [...c.store.takeLastRun(), ...d.store.takeLastRun()].sort((x, y) => x.seq - y.seq);
    assert.deepEqual(texts(taken), ['one', 'answer to one', 'two', 'answer to two'], 'each of the dead process’s lines taken once');
    const owners = (await linesOf(url)).map((r) => r.run);
    assert.ok(
      owners.every((run) => run === c.registry.id || run === d.registry.id),
      'the lines are the takers’ own now: kept until they are done with them',
    );
  } finally {
    await stopAll(opened);
  }
});

test('risk: a process that took a dead one’s session log is killed before it rebuilt from it — the next start takes the lines (nothing lost), and a clean forget deletes only its own', async () => {
  const url = await migratedDatabase(cluster);
  const opened: Proc[] = [];
  try {
    const a = await start(url, opened);
    await turn(a, 'k', 'one');
    await kill(a, url);

    const b = await start(url, opened);
    assert.deepEqual(texts(b.store.takeLastRun()), ['one', 'answer to one']);
    // b dies before its forget: the lines are left under its id.
    await kill(b, url);

    const c = await start(url, opened);
    await turn(c, 'other', 'mine');
    assert.deepEqual(texts(c.store.takeLastRun()), ['one', 'answer to one'], "the dead taker's lines are taken again");
    const e = await start(url, opened);
    await turn(e, 'k2', 'running');
    await c.store.forgetLog();
    assert.deepEqual(await linesOf(url), [{ run: e.registry.id, n: 2 }], "c's forget deletes its lines (taken and written), never a running process's");
  } finally {
    await stopAll(opened);
  }
});
