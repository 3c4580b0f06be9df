/**
 * A stopped daemon ends: after SIGTERM nothing it started keeps the process alive. `src/main.ts`
 * ends with `process.exit()`, which hides a forgotten timer, socket, server or child until the
 * day the exit path changes (or teardown waits on it); here that call is made a no-op
 * (test/fixtures/no-forced-exit.ts), so the daemon must end by itself. It runs with every part
 * that holds a handle: Telegram polling, the memory page, two MCP servers (stdio and HTTP), a
 * pending reminder, and a conversation that went through the model.
 *
 * On a loaded machine the stop takes longer, never forever: the guard that kills a lingering
 * daemon is generous (helpers/wait.ts), and the test asserts how the daemon ended (code 0, no
 * signal), not how fast.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { childEnv, mainTs, repoRoot, telegramDaemonEnv, tsxLoader } from './helpers/child.js';
import { startFakeLlm } from './helpers/fake-llm.js';
import { freePort, startTelegramEmulator } from './helpers/telegram.js';
import { patient, waitFor } from './helpers/wait.js';
import { tempDir } from './helpers/workspace.js';
import { startHttpMcpServer, stdioFixture } from './fixtures/mcp-server.js';
import { SqliteReminderStore } from '../src/features/reminders/sqlite-store.js';
import { silentLogger } from '../src/core/log.js';

const OWNER = 111;
const noForcedExit = pathToFileURL(path.join(repoRoot, 'test', 'fixtures', 'no-forced-exit.ts')).href;

test('risk: a stopped daemon lingers — after SIGTERM it ends by itself with code 0, nothing it started left running', async () => {
  const tg = await startTelegramEmulator();
  const llm = await startFakeLlm();
  const web = await startHttpMcpServer();
  const ws = await tempDir();
  const mcpConfig = path.join(ws.dir, 'mcp.json');
  await writeFile(mcpConfig, JSON.stringify({ servers: { fx: { ...stdioFixture(), tools: ['forecast'] }, web: { url: web.url, tools: ['forecast'] } } }));
  const reminders = new SqliteReminderStore(path.join(ws.dir, 'schedules.db'), silentLogger());
  await reminders.add({
    chat: `telegram:${OWNER}`,
    channel: 'telegram',
    chatId: String(OWNER),
    text: 'tomorrow',
    dueAt: Date.now() + 86_400_000,
    repeat: null,
    timezone: 'UTC',
    createdAt: Date.now(),
  });
  await reminders.close();
  const env = telegramDaemonEnv(
    { llmUrl: llm.url, workspace: ws.dir, tg },
    { TELEGRAM_ALLOWED_USERS: String(OWNER), MCP_CONFIG: mcpConfig, MEMORY_PAGE_PORT: String(await freePort()) },
  );
  const child = spawn(process.execPath, ['--import', tsxLoader, '--import', noForcedExit, mainTs], {
    cwd: ws.dir,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr.on('data', (c: Buffer) => (log += c.toString()));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  let guard: NodeJS.Timeout | undefined;
  try {
    await waitFor(() => log.includes('daemon started') || child.exitCode !== null, 20_000, 'the daemon to start');
    await waitFor(() => log.includes('memory page: http://'), 10_000, 'the memory page');
    await tg.user({ userId: OWNER }).say('hello');
    assert.equal((await tg.waitForBotMessages(OWNER, 1))[0]!.text, 'echo: hello');

    child.kill('SIGTERM');
    // Only for a daemon that never ends: the assertions below say how it ended.
    guard = setTimeout(() => child.kill('SIGKILL'), patient(30_000));
    const { code, signal } = await ended;
    const tail = log
      .split('\n')
      .filter((l) => !l.startsWith('{') || l.includes('"level":50'))
      .join('\n');
    assert.equal(signal, null, `the daemon lingered after its stop and was killed; what kept it:\n${tail}`);
    assert.equal(code, 0, log);
    assert.match(log, /\[Main\] stopped/);
    assert.match(log, /no-forced-exit: process\.exit\(0\) called/, 'the stop asked for exit code 0');
  } finally {
    clearTimeout(guard);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await tg.close();
    await llm.close();
    await web.close();
    await ws.cleanup();
  }
});
