/**
 * Reminders across kill -9. End to end (the real entry point, console channel, stdin kept
 * open, fake LLM calling schedule_message): killed before the due time → delivered once after
 * the restart, saying it is late; killed right after that delivery → not delivered again.
 * And, in a child process killed at exact points of a delivery (as in sessions/wal.test.ts):
 * after the claim but before the session → delivered at the next start; after the send but
 * before it was marked sent → never sent again (at most once).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startFakeLlm } from '../../helpers/fake-llm.js';
import { toolUser } from '../../helpers/reminders.js';
import { captureLog, tempDir } from '../../helpers/workspace.js';
import { FileSessionStore } from '../../../src/sessions/file-store.js';
import { FileMemoryService } from '../../../src/memory/file-memory.js';
import { DailyNotes } from '../../../src/memory/daily-notes.js';
import { SqliteReminderStore } from '../../../src/features/reminders/sqlite-store.js';
import { ReminderService } from '../../../src/features/reminders/service.js';
import { localDate } from '../../../src/memory/notes.js';
import { childEnv } from '../../helpers/child.js';
import { patient, waitFor } from '../../helpers/wait.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const mainTs = path.join(repoRoot, 'src', 'main.ts');
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

interface Daemon {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  closed: Promise<void>;
}

function startDaemon(env: Record<string, string>, cwd: string): Daemon {
  const child = spawn(process.execPath, ['--import', tsxLoader, mainTs], { cwd, env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const closed = new Promise<void>((r) => child.once('close', () => r()));
  return { child, stdout: () => stdout, stderr: () => stderr, closed };
}

const count = (hay: string, needle: string) => hay.split(needle).length - 1;

test('kill -9 before the due time: delivered once after the restart, with a late note; kill -9 right after that delivery: not delivered again', {
  timeout: patient(90_000),
}, async () => {
  const llm = await startFakeLlm(
    toolUser((t) => {
      // Due after the kill below, however slow the machine is to show the confirmation.
      if (t === 'remind me soon')
        return [{ name: 'schedule_message', args: { at: new Date(Date.now() + patient(2000)).toISOString(), text: 'take the cake out' } }];
      if (t === 'remind me next week')
        return [{ name: 'schedule_message', args: { at: new Date(Date.now() + 7 * 86_400_000).toISOString(), text: 'renew the parking permit' } }];
      return [];
    }),
  );
  const ws = await tempDir('membot-reminders-');
  const env = { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test-key-123456', WORKSPACE_DIR: ws.dir, LOG_LEVEL: 'info' };
  // A repo without .env (dotenv would read it) or the workspace itself.
  const cwd = existsSync(path.join(repoRoot, '.env')) ? ws.dir : repoRoot;
  const runs: Daemon[] = [];
  try {
    const first = startDaemon(env, cwd);
    runs.push(first);
    first.child.stdin.write('remind me soon\n');
    await waitFor(() => first.stdout().includes('Scheduled reminder #1'), 30_000, 'the confirmation');
    first.child.kill('SIGKILL');
    await first.closed;
    assert.equal(count(first.stdout(), '⏰'), 0, 'not delivered before its time');
    const [row] = await readScheduled(ws.dir);
    await waitFor(() => Date.now() > row!.due_at + 500, 10_000, 'the due time to pass');

    // Restart after the due time, stdin open: delivered at start, saying it is late.
    const second = startDaemon(env, cwd);
    runs.push(second);
    await waitFor(() => second.stdout().includes('⏰'), 30_000, 'the late reminder');
    second.child.kill('SIGKILL'); // right after the delivery
    await second.closed;
    assert.match(second.stdout(), /⏰ Reminder \(late — it was due \w{3} \d+ \w{3} \d{4}, \d\d:\d\d, while I was not running\): take the cake out/);

    // Third start: nothing is sent again. A reminder for next week is set, and input ends:
    // it exits 0 as usual, and the pending reminder stays stored.
    const third = startDaemon(env, cwd);
    runs.push(third);
    await waitFor(() => third.stderr().includes('daemon started'), 30_000, 'the third start');
    await new Promise((r) => setTimeout(r, 1500));
    third.child.stdin.end('remind me next week\n');
    await third.closed;
    assert.equal(third.child.exitCode, 0, third.stderr());
    assert.match(third.stdout(), /Scheduled reminder #2/);
    assert.deepEqual(
      (await readScheduled(ws.dir)).map((r) => r.status),
      ['done', 'pending'],
      'the pending one stays stored',
    );

    const all = runs.map((r) => r.stdout()).join('');
    assert.equal(count(all, 'take the cake out\n'), 1, `delivered exactly once over three runs:\n${all}`);
    const session = JSON.parse(await readFile(path.join(ws.dir, 'sessions', 'console:local.json'), 'utf8'));
    assert.equal(
      session.messages.filter((m: { content: string }) => m.content.includes('take the cake out') && m.content.startsWith('⏰')).length,
      1,
      'once in the session',
    );
    const note = await readFile(path.join(ws.dir, 'memory', 'console:local', `${localDate(new Date(row!.due_at), 'UTC')}.md`), 'utf8');
    assert.equal(count(note, 'Reminder (set by a user): ⏰ Reminder (late'), 1, 'once in the daily note');
  } finally {
    for (const r of runs) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
    await llm.close();
    await ws.cleanup();
  }
});

async function readScheduled(dir: string): Promise<Array<{ id: number; due_at: number; status: string }>> {
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(path.join(dir, 'schedules.db'), { readonly: true });
  try {
    return db.prepare('SELECT id, due_at, status FROM reminders ORDER BY id').all() as Array<{ id: number; due_at: number; status: string }>;
  } finally {
    db.close();
  }
}

/** Builds the reminder service on `dir` in a child process, runs `body`, which ends in a kill -9. */
function runThenKill(dir: string, body: string, options = ''): void {
  const src = (p: string) => JSON.stringify(path.join(repoRoot, 'src', p));
  const script = `
    import { appendFileSync } from 'node:fs';
    import { FileSessionStore } from ${src('sessions/file-store.ts')};
    import { FileMemoryService } from ${src('memory/file-memory.ts')};
    import { DailyNotes } from ${src('memory/daily-notes.ts')};
    import { SqliteReminderStore } from ${src('features/reminders/sqlite-store.ts')};
    import { ReminderService } from ${src('features/reminders/service.ts')};
    import { silentLogger } from ${src('core/log.ts')};
    const dir = ${JSON.stringify(dir)};
    const sessions = new FileSessionStore(dir + '/sessions', silentLogger());
    await sessions.init();
    const store = new SqliteReminderStore(dir + '/schedules.db', silentLogger());
    const reminders = new ReminderService({ store, sessions, notes: new DailyNotes(new FileMemoryService(dir + '/memory', 'chat'), 'UTC', silentLogger()), timezone: 'UTC', log: silentLogger(), queue: (_k, t) => t(), ${options} });
    ${body}
    await new Promise((r) => setTimeout(r, ${patient(10_000)}));
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', cwd: repoRoot });
  assert.equal(r.signal, 'SIGKILL', `child did not reach the kill: ${r.stderr}`);
}

async function reopen(dir: string) {
  const logs = captureLog();
  const sessions = new FileSessionStore(path.join(dir, 'sessions'), logs.log);
  await sessions.init();
  const store = new SqliteReminderStore(path.join(dir, 'schedules.db'), logs.log);
  const reminders = new ReminderService({
    store,
    sessions,
    notes: new DailyNotes(new FileMemoryService(path.join(dir, 'memory'), 'chat'), 'UTC', logs.log),
    timezone: 'UTC',
    log: logs.log,
    queue: (_k, t) => t(),
  });
  await reminders.settleClaims();
  const sent: string[] = [];
  const started = await reminders.start({ test: async (_c, text) => void sent.push(text) });
  return { sessions, store, reminders, logs, sent, started };
}

const reminderMessages = async (sessions: FileSessionStore) => (await sessions.getOrCreate('test', 'k')).messages.filter((m) => m.reminder !== undefined);

test('killed after the send, before it was marked sent: the next start does not send it again', async () => {
  const ws = await tempDir();
  const out = path.join(ws.dir, 'sent.txt');
  try {
    runThenKill(
      ws.dir,
      `
      await store.add({ chat: 'test:k', channel: 'test', chatId: 'k', text: 'feed the fish', dueAt: Date.now() + 200, repeat: null, timezone: 'UTC', createdAt: Date.now() });
      await reminders.start({ test: async (_c, text) => { appendFileSync(${JSON.stringify(out)}, text + '\\n'); process.kill(process.pid, 'SIGKILL'); } });
    `,
    );
    assert.equal(await readFile(out, 'utf8'), '⏰ Reminder: feed the fish\n', 'the first run sent it once');
    const r = await reopen(ws.dir);
    try {
      assert.equal(await r.reminders.runDue(), 0);
      assert.deepEqual(r.sent, [], 'not sent again');
      assert.equal((await reminderMessages(r.sessions)).length, 1, 'in the session once');
      assert.deepEqual(
        (await r.store.deliveries('test:k')).map((d) => d.state),
        ['sent'],
      );
      assert.ok(
        r.logs.lines().some((l) => l.code === 'reminder.delivery_uncertain'),
        'the uncertain case is logged',
      );
    } finally {
      await r.reminders.close();
      await r.sessions.close();
    }
  } finally {
    await ws.cleanup();
  }
});

test('a folded message (over the hourly cap) killed after the send, before it was marked sent: none of its reminders is sent again', async () => {
  const ws = await tempDir();
  const out = path.join(ws.dir, 'sent.txt');
  try {
    runThenKill(
      ws.dir,
      `
      const dueAt = Date.now() + 200;
      for (const text of ['feed the fish', 'water the plants', 'lock the door']) await store.add({ chat: 'test:k', channel: 'test', chatId: 'k', text, dueAt, repeat: null, timezone: 'UTC', createdAt: Date.now() });
      await reminders.start({ test: async (_c, text) => { appendFileSync(${JSON.stringify(out)}, text + '\\n'); process.kill(process.pid, 'SIGKILL'); } });
    `,
      'perChatPerHour: 1',
    );
    assert.match(await readFile(out, 'utf8'), /^⏰ 3 reminders together .*\n• feed the fish\n• water the plants\n• lock the door\n$/, 'one message, sent once');
    const r = await reopen(ws.dir);
    try {
      assert.equal(await r.reminders.runDue(), 0);
      assert.deepEqual(r.sent, [], 'not sent again');
      assert.deepEqual(
        (await reminderMessages(r.sessions)).map((m) => m.reminder!.split(' ').length),
        [3],
        'one session message for the three',
      );
      assert.deepEqual(
        (await r.store.deliveries('test:k')).map((d) => d.state),
        ['sent', 'sent', 'sent'],
      );
      assert.equal(r.logs.lines().filter((l) => l.code === 'reminder.delivery_uncertain').length, 3);
    } finally {
      await r.reminders.close();
      await r.sessions.close();
    }
  } finally {
    await ws.cleanup();
  }
});

test('killed after the claim, before the session was written: the next start delivers it once, late', async () => {
  const ws = await tempDir();
  try {
    runThenKill(
      ws.dir,
      `
      const r = await store.add({ chat: 'test:k', channel: 'test', chatId: 'k', text: 'lock the door', dueAt: Date.now() - 1000, repeat: null, timezone: 'UTC', createdAt: Date.now() - 5000 });
      await store.claim(r, null, Date.now());
      process.kill(process.pid, 'SIGKILL');
    `,
    );
    const r = await reopen(ws.dir);
    try {
      assert.equal(r.started, 1);
      assert.equal(r.sent.length, 1);
      assert.match(r.sent[0]!, /^⏰ Reminder \(late — it was due .*, while I was not running\): lock the door$/);
      assert.equal(await r.reminders.runDue(), 0);
      assert.equal(r.sent.length, 1, 'once');
      assert.equal((await reminderMessages(r.sessions)).length, 1);
    } finally {
      await r.reminders.close();
      await r.sessions.close();
    }
  } finally {
    await ws.cleanup();
  }
});
