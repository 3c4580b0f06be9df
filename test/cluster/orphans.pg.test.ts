/**
 * Several processes, one bot (issue 36): a process that dies leaves its last turns' session log
 * lines (what their daily-note lines and index rows are written again from after a kill,
 * sessions/pg/log.ts). A daemon still running takes them and writes what they derive — it does
 * not wait for some process to start. The dead process is a session store of its own here that
 * commits a turn and stops before anything derives from it (as kill -9 right after the commit).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startPg } from '../helpers/pg.js';
import { testDatabase } from '../helpers/pg-stores.js';
import { startTelegramEmulator } from '../helpers/telegram.js';
import { startFakeLlm, text } from '../helpers/fake-llm.js';
import { tempDir } from '../helpers/workspace.js';
import { startDaemonChild, telegramDaemonEnv } from '../helpers/child.js';
import { patient, waitFor } from '../helpers/wait.js';
import { PgSessionStore } from '../../src/sessions/pg-store.js';
import { PgChatNames } from '../../src/sessions/names-pg.js';
import { makeMessage } from '../../src/sessions/model.js';
import { silentLogger } from '../../src/core/log.js';

test('risk: a process killed right after a turn leaves that turn out of the daily notes and the index until some process starts — a running one writes them within the lease time', {
  timeout: patient(120_000),
}, async () => {
  const cluster = await startPg();
  const tg = await startTelegramEmulator();
  const llm = await startFakeLlm(() => text('ok'));
  const url = await cluster.createDatabase();
  const ws = await tempDir('membot-orphans-');
  const daemon = startDaemonChild(
    telegramDaemonEnv(
      { llmUrl: llm.url, workspace: ws.dir, tg },
      { DATABASE_URL: url, CLUSTER_LEASE_MS: '3000', TELEGRAM_ALLOWED_USERS: '7001', TELEGRAM_DM_POLICY: 'allowlist' },
    ),
    ws.dir,
  );
  const db = testDatabase(url);
  try {
    await daemon.started;
    // The process that dies: its turn committed, nothing derived yet (its id is no live process's).
    const gone = new PgSessionStore(db, new PgChatNames(db, silentLogger()), silentLogger(), { run: 'killed-process', leaseMs: 3000 });
    await gone.init();
    const w = gone.writer(await gone.getOrCreate('telegram', '7001'));
    await w.append(makeMessage('user', 'my sister Quillon moved to Lisbon'));
    await w.append(makeMessage('assistant', 'Noted, Quillon lives in Lisbon now.'));
    await gone.close();

    const noted = async () =>
      (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM memory_appends WHERE convert_from(body, 'UTF8') LIKE '%Quillon%'")).rows[0]!.n;
    const indexed = async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM memory_rows WHERE content LIKE '%Quillon%'")).rows[0]!.n;
    let seen = { noted: 0, indexed: 0 };
    await waitFor(
      async () => {
        seen = { noted: await noted(), indexed: await indexed() };
        return seen.noted > 0 && seen.indexed > 0;
      },
      30_000,
      'the running daemon to write the dead process’s turn into the notes and the index',
    ).catch(() => undefined);
    assert.equal(seen.noted, 1, "the dead process's turn has its daily-note line, once");
    assert.ok(seen.indexed > 0, "the dead process's turn is in the index");
    assert.equal((await db.query("SELECT 1 FROM session_log WHERE run = 'killed-process'")).rowCount, 0, 'the lines are the running daemon’s now');
  } finally {
    daemon.child.kill('SIGTERM');
    await new Promise((r) => (daemon.child.exitCode === null ? daemon.child.once('close', r) : r(undefined)));
    await db.close();
    await tg.close();
    await llm.close();
    await cluster.stop();
    await ws.cleanup();
  }
});
