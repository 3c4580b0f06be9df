/**
 * Reminders in PostgreSQL: the ReminderStore contract (store.contract.ts) against PgReminderStore
 * on a throwaway cluster; then two processes of their own claiming the same due reminders at
 * once — each occurrence is claimed by one of them, never by both; and the move between
 * schedules.db and PostgreSQL both ways giving the same items.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PgReminderStore } from '../../../src/features/reminders/pg-store.js';
import { SqliteReminderStore } from '../../../src/features/reminders/sqlite-store.js';
import { silentLogger } from '../../../src/core/log.js';
import { collect } from '../../../src/storage/portable.js';
import { startPg, type PgCluster } from '../../helpers/pg.js';
import { migratedDatabase, pgHarness, testDatabase } from '../../helpers/pg-stores.js';
import { loadsTheSame } from '../../helpers/stores.js';
import { tempDir } from '../../helpers/workspace.js';
import { childEnv, repoRoot, tsxLoader } from '../../helpers/child.js';
import { reminderStoreContract } from './store.contract.js';
import { waitFor } from '../../helpers/wait.js';
import { ReminderService } from '../../../src/features/reminders/service.js';
import { FileSessionStore } from '../../../src/sessions/file-store.js';
import { FileMemoryService } from '../../../src/memory/file-memory.js';
import { DailyNotes } from '../../../src/memory/daily-notes.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

describe('PgReminderStore meets the ReminderStore contract', () => reminderStoreContract(() => pgHarness(cluster, (db) => PgReminderStore.open(db))));

/**
 * A process of its own that reads what is due on `test`, says "ready", waits for the file `go`,
 * then claims each (as the service does) and prints the ids it got.
 */
function claimingProcess(url: string, go: string): { ready: Promise<void>; got: Promise<number[]> } {
  const src = (p: string) => JSON.stringify(path.join(repoRoot, 'src', p));
  const script = `
    import { existsSync } from 'node:fs';
    import { Database } from ${src('storage/pg/database.ts')};
    import { PgReminderStore } from ${src('features/reminders/pg-store.ts')};
    import { silentLogger } from ${src('core/log.ts')};
    const db = new Database({ url: ${JSON.stringify(url)}, poolSize: 4, log: silentLogger() });
    const store = await PgReminderStore.open(db);
    const due = await store.due(Date.now(), ['test']);
    process.stdout.write('ready\\n');
    while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 5));
    const got = [];
    for (const r of due) if (await store.claim(r, null, Date.now())) got.push(r.id);
    process.stdout.write(JSON.stringify(got) + '\\n');
    await db.close();
  `;
  const child = spawn(process.execPath, ['--import', tsxLoader, '--input-type=module', '-e', script], {
    cwd: repoRoot,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let onReady!: () => void;
  const ready = new Promise<void>((r) => (onReady = r));
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString();
    if (out.includes('ready')) onReady();
  });
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const got = new Promise<number[]>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!) as number[]) : reject(new Error(`exit ${code}: ${err}`)))),
  );
  return { ready: Promise.race([ready, got.then(() => undefined)]), got };
}

test('two processes claim the same due reminders at the same moment: each occurrence goes to exactly one of them', async () => {
  const url = await migratedDatabase(cluster);
  const db = testDatabase(url);
  const ws = await tempDir();
  try {
    const store = await PgReminderStore.open(db);
    const ids: number[] = [];
    for (let i = 0; i < 60; i++) {
      const chatId = String(i % 4);
      ids.push(
        (
          await store.add({
            chat: `test:${chatId}`,
            channel: 'test',
            chatId,
            text: `r${i}`,
            dueAt: Date.now() - 1000,
            repeat: null,
            timezone: 'UTC',
            createdAt: 0,
          })
        ).id,
      );
    }
    const go = path.join(ws.dir, 'go');
    const a = claimingProcess(url, go);
    const b = claimingProcess(url, go);
    // Both have read all 60 as due before either claims one.
    await Promise.all([a.ready, b.ready]);
    await writeFile(go, '');
    const [gotA, gotB] = await Promise.all([a.got, b.got]);
    assert.deepEqual(
      [...gotA, ...gotB].sort((x, y) => x - y),
      ids,
      'every occurrence claimed, none twice',
    );
    assert.equal((await store.claimed()).length, 60, 'one delivery record each');
    assert.deepEqual(await store.due(Date.now(), ['test']), []);
  } finally {
    await db.close();
    await ws.cleanup();
  }
});

test('moving schedules.db into PostgreSQL and back gives the same items: ids, statuses, delivery records, texts to the byte', async () => {
  const ws = await tempDir();
  const url = await migratedDatabase(cluster);
  const db = testDatabase(url);
  try {
    const files = SqliteReminderStore.inWorkspace(path.join(ws.dir, 'a'), silentLogger());
    const T = Date.now();
    const once = await files.add({
      chat: 'test:1',
      channel: 'test',
      chatId: '1',
      text: ' two\r\nlines, 🐝 "quoted" ',
      dueAt: T,
      repeat: null,
      timezone: 'Europe/Berlin',
      createdAt: T - 5,
    });
    await files.finish((await files.claim(once, null, T + 1))!, 'sent', T + 2);
    const daily = await files.add({
      chat: 'test:-100:5',
      channel: 'test',
      chatId: '-100:5',
      text: 'daily',
      dueAt: T,
      repeat: 'daily',
      timezone: 'UTC',
      createdAt: T,
    });
    await files.claim(daily, T + 86_400_000, T + 3);
    await files.add({ chat: 'test:1', channel: 'test', chatId: '1', text: 'later', dueAt: T + 3600_000, repeat: '0 9 * * 1-5', timezone: 'UTC', createdAt: T });
    const items = await collect(files.dump());
    const pg = await PgReminderStore.open(db);
    await loadsTheSame(pg, items);
    const back = SqliteReminderStore.inWorkspace(path.join(ws.dir, 'b'), silentLogger());
    await loadsTheSame(back, await collect(pg.dump()));
    assert.deepEqual(await back.pending('test:1'), await files.pending('test:1'));
    await files.close();
    await back.close();
  } finally {
    await db.close();
    await ws.cleanup();
  }
});

test("two daemons on one database: one running while the other claims 20 due reminders never delivers the other's claims — each is sent once", async () => {
  const url = await migratedDatabase(cluster);
  const dbs = [testDatabase(url), testDatabase(url)];
  const ws = await tempDir();
  const sessions: FileSessionStore[] = [];
  try {
    const daemon = async (n: number) => {
      const dir = path.join(ws.dir, `daemon-${n}`);
      const s = new FileSessionStore(path.join(dir, 'sessions'), silentLogger());
      await s.init();
      sessions.push(s);
      const notes = new DailyNotes(new FileMemoryService(path.join(dir, 'memory'), 'chat'), 'UTC', silentLogger());
      return new ReminderService({
        store: await PgReminderStore.open(dbs[n]!),
        sessions: s,
        notes,
        timezone: 'UTC',
        log: silentLogger(),
        queue: (_k, t) => t(),
        perChatPerHour: 100,
      });
    };
    const sent: string[] = [];
    const running = await daemon(1);
    assert.equal(await running.start({ test: async (_chat, text) => void sent.push(`running: ${text}`) }), 0, 'nothing due yet');
    const store = await PgReminderStore.open(dbs[0]!);
    for (let i = 0; i < 20; i++)
      await store.add({
        chat: `test:${i % 5}`,
        channel: 'test',
        chatId: String(i % 5),
        text: `r${i}`,
        dueAt: Date.now() - 1000,
        repeat: null,
        timezone: 'UTC',
        createdAt: 0,
      });
    // The other daemon starts and claims them all; its sends wait, so its claims stay open.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const other = await daemon(0);
    const otherRun = other.start({ test: async (_chat, text) => held.then(() => void sent.push(text)) });
    await waitFor(async () => (await store.claimed()).length === 20, 30_000, 'the other daemon claimed all 20');
    assert.equal(await running.runDue(), 0, "the running daemon's tick leaves them to the daemon delivering them");
    release();
    assert.equal(await otherRun, 20);
    assert.deepEqual(sent.map((t) => /: (r\d+)$/.exec(t)?.[1]).sort(), Array.from({ length: 20 }, (_, i) => `r${i}`).sort(), 'each once');
    assert.ok(!sent.some((t) => t.startsWith('running:')));
    running.stop();
    other.stop();
  } finally {
    for (const s of sessions) await s.close();
    for (const db of dbs) await db.close();
    await ws.cleanup();
  }
});

test('risk: a daemon starting while another is delivering a reminder it claimed sends it twice — in a cluster a claim is taken up only once its process is dead, and by one process', async () => {
  const url = await migratedDatabase(cluster);
  const db = testDatabase(url);
  try {
    // Three members of a cluster: A claims, B starts while A lives, C asks too once A is dead.
    await db.query("INSERT INTO cluster_processes (id, host, pid, version) VALUES ('A', 'h', 1, 'v'), ('B', 'h', 2, 'v'), ('C', 'h', 3, 'v')");
    const [a, b, c] = await Promise.all([PgReminderStore.open(db), PgReminderStore.open(db), PgReminderStore.open(db)]);
    a.ownedBy('A', 5_000);
    b.ownedBy('B', 5_000);
    c.ownedBy('C', 5_000);
    for (let i = 0; i < 3; i++) {
      const r = await a.add({
        chat: 'test:1',
        channel: 'test',
        chatId: '1',
        text: `r${i}`,
        dueAt: Date.now() - 1000,
        repeat: null,
        timezone: 'UTC',
        createdAt: 0,
      });
      assert.ok(await a.claim(r, null, Date.now()), 'A claims it');
    }
    assert.deepEqual(await b.claimed(['test']), [], "a live process's claims are not B's to deliver (A is delivering them)");
    // A stops beating (killed): its claims are left to one of the others.
    await db.query("UPDATE cluster_processes SET heartbeat_at = now() - interval '1 minute' WHERE id = 'A'");
    const [byB, byC] = await Promise.all([b.claimed(['test']), c.claimed(['test'])]);
    assert.deepEqual([...byB, ...byC].map((d) => d.text).sort(), ['r0', 'r1', 'r2'], 'each claim of the dead process is taken up once');
    assert.deepEqual(await c.claimed(['test']), [], 'and not again');
  } finally {
    await db.close();
  }
});
