/**
 * `npm run memory -- migrate --to postgres|files` (in-process, the function the CLI runs; search
 * through the real CLI) on a throwaway PostgreSQL: a workspace where chats talked, moved into the
 * database and back into a fresh workspace, gives the same files byte for byte and the same
 * search results; a target that holds something is refused without --force, replaced with it;
 * a running daemon, a message not yet answered and bad input stop it before anything is written.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runMigrate } from '../../src/cli/migrate.js';
import { FilePairingStore, pairingFile } from '../../src/channels/telegram/pairing-file.js';
import { FileUpdateLog } from '../../src/channels/telegram/update-log.js';
import { silentLogger } from '../../src/core/log.js';
import { SqliteMemoryIndex } from '../../src/index/sqlite-memory-index.js';
import { FileInbox } from '../../src/queue/file-inbox.js';
import { SqliteReminderStore } from '../../src/features/reminders/sqlite-store.js';
import { SqliteUsageStore } from '../../src/features/usage/sqlite-usage.js';
import { collect, type Portable } from '../../src/storage/portable.js';
import { startTestBot } from '../helpers/app.js';
import { memoryCli } from '../helpers/child.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { readTree, tempDir, testConfig } from '../helpers/workspace.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

/** The files of the stores that move today, by their path in the workspace. */
const MOVED_FILES = ['preferences/runtime-config.json', 'telegram/pairing.json', 'telegram/updates.json', 'sessions.names.json'];
const SETTINGS = '{\n  "memory": { "recentDays": 3 },\n  "compaction": {"keepLastMessages": 12}\n}\n';

async function migrate(ws: string, url: string | undefined, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const config = testConfig({ WORKSPACE_DIR: ws, ...(url ? { DATABASE_URL: url } : {}) });
  const code = await runMigrate(args, config, silentLogger(), { out: (l) => out.push(l), err: (l) => err.push(l) }, { waitMs: 1_000 });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** A workspace two chats talked in (memory.db, their names), with settings, pairing and update ids; the daemon stopped. */
async function talkedWorkspace(): Promise<string> {
  const bot = await startTestBot();
  try {
    await bot.send('1', 'my sister Dana Whitaker lives in Lisbon', { chat: { kind: 'private', name: 'Ann Lee' } });
    await bot.send('1', 'we will hike in the Alps in June');
    await bot.send('-100:7', 'the honey harvest is in August', { chat: { kind: 'topic', name: 'Honey sales', group: { chatId: '-100', name: 'Beekeepers' } } });
    await bot.app.stop();
  } finally {
    await bot.llm.close();
  }
  const ws = bot.workspace;
  const index = SqliteMemoryIndex.inWorkspace(ws, silentLogger());
  index.saveFacts([{ content: 'Ann hikes in the Alps every June', scope: 'test:1' }]);
  index.close();
  await mkdir(path.join(ws, 'preferences'), { recursive: true });
  await writeFile(path.join(ws, 'preferences', 'runtime-config.json'), SETTINGS);
  const pairing = new FilePairingStore(pairingFile(ws));
  await pairing.approve(((await pairing.request({ userId: '5', username: 'Ann', name: 'Ann Lee', chatId: '5' })) as { code: string }).code);
  await pairing.request({ userId: '6', chatId: '6' });
  await pairing.approveGroup({ chatId: '-100', title: 'Beekeepers', by: '5' });
  await FileUpdateLog.inWorkspace(ws, silentLogger()).admit([1001, 1002, 1003]);
  const reminders = SqliteReminderStore.inWorkspace(ws, silentLogger());
  const base = { channel: 'test', timezone: 'UTC', createdAt: Date.UTC(2026, 10, 1) };
  await reminders.add({ ...base, chat: 'test:1', chatId: '1', text: 'water the plants', dueAt: Date.UTC(2027, 0, 1, 9), repeat: 'daily' });
  const once = await reminders.add({ ...base, chat: 'test:1', chatId: '1', text: 'call Dana', dueAt: Date.UTC(2026, 10, 2), repeat: null });
  await reminders.finish((await reminders.claim(once, null, Date.UTC(2026, 10, 2)))!, 'sent', Date.UTC(2026, 10, 2, 0, 0, 1));
  reminders.close();
  return ws;
}

const search = async (ws: string, query: string, chat: string) => {
  const res = await memoryCli(['search', query, '--chat', chat, '--json'], { WORKSPACE_DIR: ws });
  assert.equal(res.code, 0, res.stderr);
  return res.stdout;
};

test('a workspace moved into PostgreSQL and back into a fresh one: the same files byte for byte, the same search results', async () => {
  const ws = await talkedWorkspace();
  const back = await tempDir();
  try {
    const url = await cluster.createDatabase();
    const into = await migrate(ws, url, '--to', 'postgres');
    assert.equal(into.code, 0, into.err);
    for (const line of ['runtime settings: 1 item', 'pairing: 1 item', "Telegram's update log: 3 items", 'chat names: 3 items']) {
      assert.ok(into.out.includes(line), `${line} in:\n${into.out}`);
    }
    assert.match(into.out, /memory index: \d+ items/);
    assert.match(into.out, /sessions: \d+ items/);
    assert.match(into.out, /memory files: \d+ items/);

    const out = await migrate(back.dir, url, '--to', 'files');
    assert.equal(out.code, 0, out.err);
    const counts = (report: string) => report.split('\n').filter((l) => l.startsWith('  '));
    assert.deepEqual(counts(out.out), counts(into.out), 'the same counts both ways');
    for (const file of MOVED_FILES) {
      assert.deepEqual(await readFile(path.join(back.dir, file)), await readFile(path.join(ws, file)), `${file}: the same bytes`);
    }
    // SQLite files are not byte for byte the same when written again: their items are.
    const sqliteStores: Array<(dir: string) => Portable<unknown> & { close(): void }> = [
      (dir) => SqliteReminderStore.inWorkspace(dir, silentLogger()),
      (dir) => SqliteUsageStore.inWorkspace(dir, 'UTC'),
    ];
    for (const open of sqliteStores) {
      const [before, after] = [open(ws), open(back.dir)];
      const items = await collect(before.dump());
      assert.ok(items.length > 0, `${before.portableName}: something moved`);
      assert.deepEqual(await collect(after.dump()), items, `${before.portableName}: the same items`);
      before.close();
      after.close();
    }
    for (const tree of ['memory', 'sessions']) {
      const moved = await readTree(path.join(ws, tree));
      assert.ok(Object.keys(moved).length > 0, `${tree}/ holds files`);
      assert.deepEqual(await readTree(path.join(back.dir, tree)), moved, `${tree}/: the same files, the same bytes`);
    }
    assert.equal(existsSync(path.join(back.dir, 'daemon.pid')), false, 'the lock is let go');
    for (const [query, chat] of [
      ['Dana Lisbon', 'test:1'],
      ['hike Alps June', 'test:1'],
      ['honey harvest', 'test:-100:7'],
      ['Lisbon', 'test:-100:7'],
    ] as const) {
      const before = await search(ws, query, chat);
      assert.ok(query === 'Lisbon' || JSON.parse(before).length > 0, `${query}: found in ${chat}`);
      assert.equal(await search(back.dir, query, chat), before, `${query} in ${chat}: the same results`);
    }
  } finally {
    await back.cleanup();
    await rm(ws, { recursive: true, force: true });
  }
});

test('risk: a move overwrites what a target holds — refused without --force, nothing written; with --force the target is replaced', async () => {
  const ws = await talkedWorkspace();
  const other = await tempDir();
  try {
    const url = await cluster.createDatabase();
    assert.equal((await migrate(ws, url, '--to', 'postgres')).code, 0);
    // The workspace changes; moving it again into the database that holds the old copy:
    const index = SqliteMemoryIndex.inWorkspace(ws, silentLogger());
    index.saveFacts([{ content: 'Ann keeps bees since 2024', scope: 'test:1' }]);
    index.close();
    const refused = await migrate(ws, url, '--to', 'postgres');
    assert.equal(refused.code, 1);
    assert.match(
      refused.err,
      /^migrate: the database already holds runtime settings, pairing, Telegram's update log, chat names, memory index, sessions, memory files, reminders, token usage, why records: nothing was written\. Run again with --force/,
    );
    assert.equal(refused.err.split('\n').length, 1, 'one line');
    assert.equal(refused.out, '');
    await migrate(other.dir, url, '--to', 'files');
    assert.equal(await search(other.dir, 'bees', 'test:1'), '[]\n', 'the database kept the copy it had');

    const forced = await migrate(ws, url, '--to', 'postgres', '--force');
    assert.equal(forced.code, 0, forced.err);
    assert.match(forced.out, /--force: replacing/);
    // Into files, a workspace that holds something: refused the same way, then replaced.
    const intoFiles = await migrate(other.dir, url, '--to', 'files');
    assert.equal(intoFiles.code, 1);
    assert.match(intoFiles.err, /already holds .*--force/);
    assert.equal((await migrate(other.dir, url, '--to', 'files', '--force')).code, 0);
    assert.match(await search(other.dir, 'bees', 'test:1'), /keeps bees since 2024/);
    assert.equal(await search(other.dir, 'Dana Lisbon', 'test:1'), await search(ws, 'Dana Lisbon', 'test:1'), 'no row twice');
    for (const file of MOVED_FILES) assert.deepEqual(await readFile(path.join(other.dir, file)), await readFile(path.join(ws, file)), file);
  } finally {
    await other.cleanup();
    await rm(ws, { recursive: true, force: true });
  }
});

test('refused before anything is written: a running daemon, a message not yet answered, no DATABASE_URL, a bad --to, an unreachable database', async () => {
  const ws = await tempDir();
  try {
    await mkdir(path.join(ws.dir, 'preferences'), { recursive: true });
    await writeFile(path.join(ws.dir, 'preferences', 'runtime-config.json'), SETTINGS);
    const url = await cluster.createDatabase();
    const empty = async () => {
      const probe = await tempDir();
      try {
        assert.equal((await migrate(probe.dir, url, '--to', 'files')).code, 0);
        return !existsSync(path.join(probe.dir, 'preferences', 'runtime-config.json'));
      } finally {
        await probe.cleanup();
      }
    };

    // A daemon holding the workspace (a live process whose command line names main.ts).
    const daemon = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)', 'main.ts'], { stdio: 'ignore' });
    try {
      await writeFile(path.join(ws.dir, 'daemon.pid'), `${daemon.pid}\n`);
      const r = await migrate(ws.dir, url, '--to', 'postgres');
      assert.equal(r.code, 1);
      assert.match(r.err, /^migrate: another daemon \(pid \d+\) is already using .*stop it first/);
    } finally {
      daemon.kill();
    }
    assert.equal(await empty(), true, 'nothing written while the daemon ran');

    // A message the stopped daemon had not answered: it stays in the journal, nothing moves.
    const inbox = FileInbox.inWorkspace(ws.dir);
    await inbox.accept({ channel: 'test', chatId: '1', text: 'are you there?', receivedAt: new Date(), messageId: '9' } as never).durable;
    await inbox.shutdown();
    const waiting = await migrate(ws.dir, url, '--to', 'postgres');
    assert.equal(waiting.code, 1);
    assert.match(waiting.err, /^migrate: the intake journal holds 1 message not yet answered: start the bot .*Nothing was written\.$/);
    assert.equal(await empty(), true);

    assert.match((await migrate(ws.dir, undefined, '--to', 'postgres')).err, /^migrate: DATABASE_URL is not set/);
    assert.match((await migrate(path.join(ws.dir, 'nowhere'), url, '--to', 'postgres')).err, /^migrate: .*nowhere does not exist: set WORKSPACE_DIR/);
    for (const args of [[], ['--to', 'mysql'], ['--to']]) {
      const r = await migrate(ws.dir, url, ...args);
      assert.equal(r.code, 2);
      assert.match(r.err, /^migrate: say where to: --to postgres .* or --to files/);
    }
    const down = url.replace(/:\d+\//, ':9/');
    const r = await migrate(ws.dir, down, '--to', 'postgres');
    assert.equal(r.code, 1);
    assert.match(r.err, /^migrate: the database at 127\.0\.0\.1:9\/\w+ could not be reached: .*The source was not changed: nothing was written\.$/);
    assert.ok(!r.err.includes(cluster.password), 'no password in the error');
    assert.equal(await readFile(path.join(ws.dir, 'preferences', 'runtime-config.json'), 'utf8'), SETTINGS, 'the source as it was');
  } finally {
    await ws.cleanup();
  }
});
