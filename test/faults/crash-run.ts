/**
 * Crash at random (issue 7), in either mode (issue 35): the real daemon (built entry point,
 * Telegram channel against the emulator, fake LLM on 127.0.0.1) serves 20 chats while it is
 * killed with SIGKILL at random moments, 20 times, and restarted each time — with DATABASE_URL on
 * a fresh empty workspace each time. After every kill: no JSON file or SQLite database left is
 * corrupt, and the daemon serves again. At the end: every message the daemon took from Telegram
 * is kept, no reply was sent twice, and every reply's exchange has its daily-note line and its
 * index rows, once each (derived from the session log, rebuilt after a kill), and no line pairs a
 * message with another's answer. What is kept is read through the stores' own dumps (Portable),
 * the same way in both modes. The counts are printed.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { redeliverUntilConfirmed, startTelegramEmulator, type TelegramEmulator } from '../helpers/telegram.js';
import { lastUserText, startFakeLlm, text } from '../helpers/fake-llm.js';
import { tempDir } from '../helpers/workspace.js';
import { childEnv, telegramDaemonEnv, warningsOf } from '../helpers/child.js';
import { patient, waitFor } from '../helpers/wait.js';
import { testDatabase } from '../helpers/pg-stores.js';
import { silentLogger } from '../../src/core/log.js';
import { FileSessionStore } from '../../src/sessions/file-store.js';
import { PgSessionStore } from '../../src/sessions/pg-store.js';
import { PgChatNames } from '../../src/sessions/names-pg.js';
import { FileMemoryService } from '../../src/memory/file-memory.js';
import { PgMemoryService } from '../../src/memory/pg/service.js';
import { SqliteIndexPortable } from '../../src/index/portable-index.js';
import { PgIndexPortable } from '../../src/index/pg/portable-pg.js';
import { collect } from '../../src/storage/portable.js';

const CHATS = 20;
const KILLS = 20;

export interface CrashOptions {
  /** PostgreSQL mode: a fresh database for the run, removed by `stop`. */
  postgres?: () => Promise<{ url: string; stop: () => Promise<void> }>;
}

/** A chat's session as its dump holds it: its messages in order. */
export type KeptSession = { channel: string; chatId: string; messages: Array<{ role: string; content: string; reminder?: string; toolCalls?: unknown[] }> };

/** What a run left kept, read through the stores' dumps: the sessions, users' messages in them, daily-note lines, episode rows. */
export async function keptState(workspace: string, url: string | undefined) {
  const log = silentLogger();
  const db = url ? testDatabase(url) : undefined;
  try {
    const sessions = db ? new PgSessionStore(db, new PgChatNames(db, log), log) : FileSessionStore.inWorkspace(workspace, log);
    const memory = db ? new PgMemoryService(db, 'chat') : FileMemoryService.inWorkspace(workspace, 'chat');
    const index = db ? new PgIndexPortable(db) : SqliteIndexPortable.inWorkspace(workspace, log);
    const userMessages: string[] = [];
    const kept: KeptSession[] = [];
    for (const item of await collect(sessions.dump())) {
      if (item.kind !== 'session') continue;
      const messages = JSON.parse(item.text).messages as KeptSession['messages'];
      kept.push({ channel: item.channel, chatId: item.chatId, messages });
      for (const m of messages) if (m.role === 'user') userMessages.push(m.content);
    }
    const noteLines: string[] = [];
    for (const item of await collect(memory.dump()))
      if (item.kind === 'file' && /^\d{4}-\d\d-\d\d\.md$/.test(item.name)) noteLines.push(...item.text.split('\n'));
    const episodes: Array<{ content: string; role: string | null }> = [];
    for (const item of await collect(index.dump()))
      if ('memory' in item && item.memory.kind === 'episode') episodes.push({ content: item.memory.content, role: item.memory.source_role ?? null });
    if ('close' in index) (index as { close(): void }).close();
    return { sessions: kept, userMessages, noteLines, episodes };
  } finally {
    await db?.close();
  }
}

/**
 * Derived from the session log (issue 29): each reply's exchange (`repliedTo`: the messages
 * answered `echo: <message>`) has its note line and its two index rows — written after the reply
 * without fsync, rebuilt after a kill — once each; and no note line pairs a message with the
 * answer to another. Each list names what is wrong (empty: all well).
 */
export function derivedChecks(state: Pick<Awaited<ReturnType<typeof keptState>>, 'noteLines' | 'episodes'>, repliedTo: string[]) {
  const noteLines = new Map<string, number>();
  for (const line of state.noteLines) {
    const body = /^\[\d\d:\d\d\] (User: .*)$/.exec(line)?.[1];
    if (body) noteLines.set(body, (noteLines.get(body) ?? 0) + 1);
  }
  const episodes = new Map<string, number>();
  for (const e of state.episodes) episodes.set(e.content, (episodes.get(e.content) ?? 0) + 1);
  const notesMissing = repliedTo.filter((t) => !noteLines.has(`User: ${t} | Assistant: echo: ${t}`));
  const notesTwice = [...noteLines.entries()].filter(([, c]) => c > 1).map(([b]) => b);
  // Each line pairs a message with its own answer (the model echoes the last message it read):
  // a turn run for a message the chat had moved on from answered the later one (issue 33).
  const notesMispaired = [...noteLines.keys()].filter((b) => {
    const pair = /^User: (.*) \| Assistant: echo: (.*)$/.exec(b);
    return pair !== null && pair[1] !== pair[2];
  });
  const rowsWrong = repliedTo.filter((t) => episodes.get(t) !== 1 || episodes.get(`echo: ${t}`) !== 1);
  return { notesMissing, notesTwice, notesMispaired, rowsWrong };
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FIRST_USER = 5001;

function startDaemon(env: Record<string, string>, cwd: string): { child: ChildProcess; log: () => string; started: Promise<number> } {
  const t0 = Date.now();
  const child = spawn(process.execPath, [path.join(repoRoot, 'dist', 'main.js')], { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  let resolveStarted!: (ms: number) => void;
  const started = new Promise<number>((r) => (resolveStarted = r));
  const onData = (c: Buffer) => {
    log += c.toString();
    if (log.includes('daemon started')) resolveStarted(Date.now() - t0);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  return { child, log: () => log, started };
}

async function allJsonParses(dir: string): Promise<string[]> {
  const bad: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith('.json')) {
        try {
          JSON.parse(await readFile(p, 'utf8'));
        } catch {
          bad.push(path.relative(dir, p));
        }
      }
    }
  };
  await walk(dir);
  return bad;
}

export async function crashAtRandom(opts: CrashOptions = {}): Promise<void> {
  // npm run build: compiles only what changed since the last build.
  const build = spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'build.mjs')], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(build.status, 0, `build failed: ${build.stdout}${build.stderr}`);

  const tg: TelegramEmulator = await startTelegramEmulator();
  const llm = await startFakeLlm((req) => ({ ...text(`echo: ${lastUserText(req)}`), delayMs: 5 + Math.floor(Math.random() * 60) }));
  // With DATABASE_URL every start gets a fresh empty workspace: nothing a start needs may be local.
  const pg = opts.postgres ? await opts.postgres() : undefined;
  const workspaces = [await tempDir('membot-crash-')];
  const wsNow = () => workspaces.at(-1)!.dir;
  // The emulator forgets an update once it has handed it out; real Telegram hands it out again
  // until a later getUpdates confirms it (helpers/telegram.ts): taken = confirmed that way.
  const taken = redeliverUntilConfirmed(tg);
  const env = (workspace: string) =>
    telegramDaemonEnv(
      { llmUrl: llm.url, workspace, tg },
      {
        // With DATABASE_URL the daemon is one process of a cluster: a killed one's polling lease and
        // chat claims pass to the next start once they expire — the shortest lease, so they do soon.
        ...(pg ? { DATABASE_URL: pg.url, CLUSTER_LEASE_MS: '3000' } : {}),
        TELEGRAM_ALLOWED_USERS: Array.from({ length: CHATS }, (_, i) => FIRST_USER + i).join(','),
        TELEGRAM_DM_POLICY: 'allowlist',
        // Each chat sends ~100 messages a minute here, on purpose (crash recovery under load): the
        // flood limits would answer most of them with a refusal instead of a turn.
        RATE_LIMIT_PER_MINUTE: '0',
        MAX_QUEUED_PER_CHAT: '10000',
      },
    );
  const users = Array.from({ length: CHATS }, (_, i) => tg.user({ userId: FIRST_USER + i }));
  const sent: string[] = [];
  let sending = true;
  let n = 0;
  const sender = (async () => {
    while (sending) {
      const u = users[Math.floor(Math.random() * CHATS)]!;
      const t = `m${++n} from ${u.userId}`;
      sent.push(t);
      await u.say(t).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 30));
    }
  })();

  const startTimes: number[] = [];
  const corrupt: string[] = [];
  const runs: Array<() => string> = [];
  let daemon = startDaemon(env(wsNow()), wsNow());
  runs.push(daemon.log);
  try {
    for (let k = 0; k < KILLS; k++) {
      startTimes.push(await daemon.started);
      await new Promise((r) => setTimeout(r, 150 + Math.random() * 900));
      daemon.child.kill('SIGKILL');
      await new Promise((r) => daemon.child.once('close', r));
      corrupt.push(...(await allJsonParses(wsNow())).map((f) => `after kill ${k + 1}: ${f}`));
      // The index's SQLite file: the index itself, or with DATABASE_URL its local cache.
      const file = path.join(wsNow(), pg ? 'memory.cache.db' : 'memory.db');
      if (existsSync(file)) {
        const db = new Database(file);
        const check = db.pragma('integrity_check', { simple: true });
        db.close();
        if (check !== 'ok') corrupt.push(`after kill ${k + 1}: ${path.basename(file)} ${String(check)}`);
      }
      if (pg) workspaces.push(await tempDir('membot-crash-'));
      daemon = startDaemon(env(wsNow()), wsNow());
      runs.push(daemon.log);
    }
    startTimes.push(await daemon.started);
    sending = false;
    await sender;
    // Let the last run take and finish everything, then stop it gracefully.
    await waitFor(() => sent.every((t) => taken.has(t)), 90_000, 'the daemon to take every message');
    // Then wait until the replies stop growing (the last turns finish).
    for (let last = -1; tg.botMessages().length !== last; ) {
      last = tg.botMessages().length;
      await new Promise((r) => setTimeout(r, 2000));
    }
    daemon.child.kill('SIGTERM');
    await new Promise((r) => daemon.child.once('close', r));

    // Kept (on disk, or in the database): each taken message in its chat's session, note, or the index.
    const state = await keptState(wsNow(), pg?.url);
    const onDisk = new Set([...state.userMessages, ...state.episodes.filter((e) => e.role === 'user').map((e) => e.content)]);
    const lost = [...taken.keys()].filter((t) => !onDisk.has(t));

    const repliedTo = [...taken.keys()].filter((t) => tg.botMessages().some((m) => m.text === `echo: ${t}`));
    const { notesMissing, notesTwice, notesMispaired, rowsWrong } = derivedChecks(state, repliedTo);

    const replies = new Map<string, number>();
    for (const m of tg.botMessages()) replies.set(m.text, (replies.get(m.text) ?? 0) + 1);
    const twice = [...replies.entries()].filter(([t, c]) => t.startsWith('echo: ') && c > 1);
    const answered = [...taken.keys()].filter((t) => replies.has(`echo: ${t}`)).length;
    const sortedStarts = [...startTimes].sort((a, b) => a - b);
    const report = {
      mode: pg ? 'PostgreSQL' : 'files',
      kills: KILLS,
      messagesSent: sent.length,
      messagesTaken: taken.size,
      messagesFoundOnDisk: taken.size - lost.length,
      answered,
      repliesSentTwice: twice.length,
      repliesWithoutTheirNoteLine: notesMissing.length,
      noteLinesTwice: notesTwice.length,
      noteLinesPairingAnotherAnswer: notesMispaired.length,
      repliesWithoutExactlyOneIndexRowEach: rowsWrong.length,
      corruptFiles: corrupt.length,
      restartToServingMs: { median: sortedStarts[Math.floor(sortedStarts.length / 2)], max: sortedStarts.at(-1) },
    };
    process.stdout.write(`crash report: ${JSON.stringify(report)}\n`);
    process.stdout.write(`daemon warnings and errors over all runs: ${JSON.stringify(warningsOf(runs.map((r) => r())))}\n`);
    assert.deepEqual(corrupt, [], 'no corrupt file after any kill');
    assert.deepEqual(lost, [], 'every message the daemon took is kept');
    assert.deepEqual(twice, [], 'no reply sent twice');
    assert.deepEqual(notesMissing, [], "every reply's exchange has its note line");
    assert.deepEqual(notesTwice, [], 'no note line twice');
    assert.deepEqual(notesMispaired, [], 'no note line pairs a message with the answer to another');
    assert.deepEqual(rowsWrong, [], "every reply's exchange has one index row per message");
    assert.ok(taken.size >= 100, `enough traffic (${taken.size} messages)`);
    // Spawn to "daemon started" (built entry point). The target is 2 s, measured by the figure
    // printed above (docs/BENCHMARKS.md), not asserted: on a shared 2-core machine at load ~8 the
    // median reached 3.4–4.1 s with nothing wrong. This bound only catches a start that hangs
    // or does work proportional to the data (a rebuild at every start), scaled like every
    // deadline of the tests (helpers/wait.ts).
    assert.ok(report.restartToServingMs.median! <= patient(15_000), `restart to serving: ${JSON.stringify(report.restartToServingMs)}`);
  } finally {
    sending = false;
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGKILL');
    await tg.close();
    await llm.close();
    for (const w of workspaces) await w.cleanup();
    await pg?.stop();
  }
}
