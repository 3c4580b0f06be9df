/**
 * Crash at random (issue 7): the real daemon (built entry point, Telegram channel against the
 * emulator, fake LLM on 127.0.0.1) serves 20 chats while it is killed with SIGKILL at random
 * moments, 20 times, and restarted each time. After every restart: no JSON file or SQLite
 * database is corrupt and the daemon serves again. At the end: every message the daemon took
 * from Telegram is on disk, no reply was sent twice, and every reply's exchange has its daily-note
 * line and its index rows, once each (derived from the session log, rebuilt after a kill), and
 * no line pairs a message with another's answer. The counts are printed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { redeliverUntilConfirmed, startTelegramEmulator, type TelegramEmulator } from '../helpers/telegram.js';
import { lastUserText, startFakeLlm, text } from '../helpers/fake-llm.js';
import { tempDir } from '../helpers/workspace.js';
import { childEnv, telegramDaemonEnv, warningsOf } from '../helpers/child.js';
import { patient, waitFor } from '../helpers/wait.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHATS = 20;
const KILLS = 20;
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

test('crash at random: 20 × kill -9 while 20 chats talk — nothing accepted is lost, nothing corrupt, no reply twice', {
  timeout: patient(420_000),
}, async () => {
  // npm run build: compiles only what changed since the last build.
  const build = spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'build.mjs')], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(build.status, 0, `build failed: ${build.stdout}${build.stderr}`);

  const tg: TelegramEmulator = await startTelegramEmulator();
  const llm = await startFakeLlm((req) => ({ ...text(`echo: ${lastUserText(req)}`), delayMs: 5 + Math.floor(Math.random() * 60) }));
  const ws = await tempDir('membot-crash-');
  // An update counts as taken by the daemon once a later getUpdates confirmed it.
  const taken = redeliverUntilConfirmed(tg);
  const env = telegramDaemonEnv(
    { llmUrl: llm.url, workspace: ws.dir, tg },
    {
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
  let daemon = startDaemon(env, ws.dir);
  runs.push(daemon.log);
  try {
    for (let k = 0; k < KILLS; k++) {
      startTimes.push(await daemon.started);
      await new Promise((r) => setTimeout(r, 150 + Math.random() * 900));
      daemon.child.kill('SIGKILL');
      await new Promise((r) => daemon.child.once('close', r));
      corrupt.push(...(await allJsonParses(ws.dir)).map((f) => `after kill ${k + 1}: ${f}`));
      const db = new Database(path.join(ws.dir, 'memory.db'));
      const check = db.pragma('integrity_check', { simple: true });
      db.close();
      if (check !== 'ok') corrupt.push(`after kill ${k + 1}: memory.db ${String(check)}`);
      daemon = startDaemon(env, ws.dir);
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

    // On disk: each taken message in its chat's session file, note, or the index.
    const onDisk = new Set<string>();
    for (const f of await readdir(path.join(ws.dir, 'sessions'))) {
      if (!f.endsWith('.json')) continue;
      for (const m of JSON.parse(await readFile(path.join(ws.dir, 'sessions', f), 'utf8')).messages) if (m.role === 'user') onDisk.add(m.content);
    }
    const db = new Database(path.join(ws.dir, 'memory.db'), { readonly: true });
    for (const r of db.prepare("SELECT content FROM memories WHERE kind = 'episode' AND source_role = 'user'").all() as Array<{ content: string }>)
      onDisk.add(r.content);
    db.close();
    const lost = [...taken.keys()].filter((t) => !onDisk.has(t));

    // Derived from the session log (issue 29): each reply's exchange has its note line and its
    // two index rows — written after the reply without fsync, rebuilt after a kill — once each.
    const noteLines = new Map<string, number>();
    for (const dir of await readdir(path.join(ws.dir, 'memory')).catch(() => [] as string[])) {
      for (const f of await readdir(path.join(ws.dir, 'memory', dir)).catch(() => [] as string[])) {
        if (!/^\d{4}-\d\d-\d\d\.md$/.test(f)) continue;
        for (const line of (await readFile(path.join(ws.dir, 'memory', dir, f), 'utf8')).split('\n')) {
          const body = /^\[\d\d:\d\d\] (User: .*)$/.exec(line)?.[1];
          if (body) noteLines.set(body, (noteLines.get(body) ?? 0) + 1);
        }
      }
    }
    const rowsDb = new Database(path.join(ws.dir, 'memory.db'), { readonly: true });
    const rowCount = rowsDb.prepare("SELECT COUNT(*) AS n FROM memories WHERE kind = 'episode' AND content = ?");
    const repliedTo = [...taken.keys()].filter((t) => tg.botMessages().some((m) => m.text === `echo: ${t}`));
    const notesMissing = repliedTo.filter((t) => !noteLines.has(`User: ${t} | Assistant: echo: ${t}`));
    const notesTwice = [...noteLines.entries()].filter(([, c]) => c > 1).map(([b]) => b);
    // Each line pairs a message with its own answer (the model echoes the last message it read):
    // a turn run for a message the chat had moved on from answered the later one (issue 33).
    const notesMispaired = [...noteLines.keys()].filter((b) => {
      const pair = /^User: (.*) \| Assistant: echo: (.*)$/.exec(b);
      return pair !== null && pair[1] !== pair[2];
    });
    const rowsWrong = repliedTo.filter((t) => (rowCount.get(t) as { n: number }).n !== 1 || (rowCount.get(`echo: ${t}`) as { n: number }).n !== 1);
    rowsDb.close();

    const replies = new Map<string, number>();
    for (const m of tg.botMessages()) replies.set(m.text, (replies.get(m.text) ?? 0) + 1);
    const twice = [...replies.entries()].filter(([t, c]) => t.startsWith('echo: ') && c > 1);
    const answered = [...taken.keys()].filter((t) => replies.has(`echo: ${t}`)).length;
    const sortedStarts = [...startTimes].sort((a, b) => a - b);
    const report = {
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
    assert.deepEqual(lost, [], 'every message the daemon took is on disk');
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
    await ws.cleanup();
  }
});
