/**
 * How the daemon runs where it is started (src/app/run-mode.ts): the decision itself, then the
 * real entry point in each place — under pm2 with no channel (refused), in a terminal (a chat
 * for a person, logs in a file), and serving Telegram (info on stdout, warnings on stderr).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { defaultLogFile, runMode } from '../../src/app/run-mode.js';
import { CHANNELS } from '../../src/app/channels.js';
import { loadConfig } from '../../src/config/env.js';
import { childEnv, mainTs, repoRoot, spawnCollected, telegramDaemonEnv, tsxLoader } from '../helpers/child.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { startTelegramEmulator } from '../helpers/telegram.js';
import { tempDir } from '../helpers/workspace.js';
import { waitFor } from '../helpers/wait.js';

const WS = '/srv/membot/workspace';
const mode = (token: string | undefined, env: Record<string, string> = {}, tty = false, logFile?: string) =>
  runMode({ logFile, workspaceDir: WS, channels: loadConfig({ OPENAI_API_KEY: 'k', TELEGRAM_BOT_TOKEN: token }, WS, CHANNELS).config.channels }, env, tty);

test('the decision: channel, terminal, where logs go, and the refusal under pm2', () => {
  assert.deepEqual(mode(undefined, {}, true), { channel: 'console', terminal: true, logs: { kind: 'file', file: defaultLogFile(WS) } });
  assert.equal(defaultLogFile(WS), '/srv/membot/workspace/logs/membot.log');
  assert.deepEqual(mode(undefined, {}, false), { channel: 'console', terminal: false, logs: { kind: 'stderr' } }, 'piped: unchanged');
  assert.deepEqual(mode('1:x', {}, false), { channel: 'telegram', terminal: false, logs: { kind: 'split' } });
  assert.deepEqual(mode('1:x', {}, true).logs, { kind: 'split' }, 'Telegram started from a terminal: the terminal is not a chat');
  assert.deepEqual(mode(undefined, {}, true, '/var/log/m.log').logs, { kind: 'file', file: '/var/log/m.log' }, 'LOG_FILE wins');
  assert.deepEqual(mode(undefined, {}, false, '/var/log/m.log').logs, { kind: 'file', file: '/var/log/m.log' });
  assert.match(mode(undefined, { pm_id: '0', PM2_HOME: '/root/.pm2' }).refusal!, /^no channel to serve under pm2: set TELEGRAM_BOT_TOKEN/);
  assert.equal(mode('1:x', { pm_id: '0' }).refusal, undefined, 'pm2 with a bot token runs');
  assert.equal(mode(undefined, { PM2_HOME: '/root/.pm2' }).refusal, undefined, 'PM2_HOME alone (a shell setting) is not pm2');
});

const daemon = (env: Record<string, string>, cwd: string) => spawnCollected(process.execPath, ['--import', tsxLoader, mainTs], { env: childEnv(env), cwd });

test('under pm2 (pm_id set) with no bot token: exit 2 with one line saying what to set, nothing on stdout', async () => {
  const ws = await tempDir();
  try {
    const run = daemon({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', WORKSPACE_DIR: ws.dir, pm_id: '0', PM2_HOME: path.join(ws.dir, '.pm2') }, ws.dir);
    // pm2 keeps the child's stdin open: without the refusal the daemon would wait on it for ever.
    const code = await run.exited;
    assert.equal(code, 2, run.err());
    assert.equal(run.out(), '');
    const lines = run.err().split('\n').filter(Boolean);
    assert.deepEqual(lines, [
      'config: no channel to serve under pm2: set TELEGRAM_BOT_TOKEN in .env (npm run setup asks for it), or run npm start in a terminal for the terminal chat',
    ]);
    assert.ok(!existsSync(path.join(ws.dir, 'sessions')), 'nothing was started');
  } finally {
    await ws.cleanup();
  }
});

test('Telegram: info log lines on stdout, warnings on stderr (pm2 keeps them apart)', async () => {
  const tg = await startTelegramEmulator();
  const llm = await startFakeLlm();
  const ws = await tempDir();
  // setMyCommands is cosmetic: its failure is a warning.
  tg.intercept('setMyCommands', () => ({ status: 500, json: { ok: false, error_code: 500, description: 'Internal Server Error' } }));
  const run = daemon(telegramDaemonEnv({ llmUrl: llm.url, workspace: ws.dir, tg }), ws.dir);
  try {
    await waitFor(() => /daemon started/.test(run.out()) || /daemon started/.test(run.err()), 20_000, 'the daemon to start');
    await waitFor(() => /setMyCommands failed/.test(run.err() + run.out()), 10_000, 'the setMyCommands warning');
    const parse = (s: string) =>
      s
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { level: number; msg: string });
    const out = parse(run.out());
    const err = parse(run.err());
    assert.ok(
      out.some((l) => /daemon started/.test(l.msg)),
      `daemon started is on stdout:\n${run.out()}`,
    );
    assert.ok(
      err.some((l) => /setMyCommands failed/.test(l.msg)),
      `the warning is on stderr:\n${run.err()}`,
    );
    assert.deepEqual(
      out.filter((l) => l.level >= 40),
      [],
      'no warning or error on stdout',
    );
    assert.deepEqual(
      err.filter((l) => l.level < 40),
      [],
      'no info line on stderr',
    );
  } finally {
    run.kill();
    await run.exited;
    await tg.close();
    await llm.close();
    await ws.cleanup();
  }
});

test('the terminal chat (stdin a terminal): a banner, a prompt, the reply, no log line on screen; logs in workspace/logs/membot.log (0600); /quit leaves', async () => {
  const llm = await startFakeLlm();
  const ws = await tempDir();
  // `script` (util-linux) runs the daemon on a pseudo-terminal, as a person's shell would.
  const command = [process.execPath, '--import', tsxLoader, mainTs].map((a) => `'${a}'`).join(' ');
  const run = spawnCollected('script', ['-qfec', command, '/dev/null'], {
    env: childEnv({ OPENAI_BASE_URL: llm.url, WORKSPACE_DIR: ws.dir, LOG_LEVEL: 'debug', TERM: 'dumb' }),
    cwd: existsSync(path.join(repoRoot, '.env')) ? ws.dir : repoRoot,
  });
  try {
    await waitFor(() => /\/quit or Ctrl\+D to leave/.test(run.out()) || /config:/.test(run.out()), 20_000, 'the banner');
    run.write('hello there\r');
    await waitFor(() => run.out().includes('echo: hello there'), 20_000, 'the reply');
    run.write('/quit\r');
    assert.equal(await run.exited, 0, run.out());
    const screen = run.out();
    assert.match(
      screen,
      /^membot \(gpt-4o-mini, chat console:local\): type a message, \/help for commands, \/quit or Ctrl\+D to leave\. Logs: .*logs\/membot\.log\r?$/m,
    );
    assert.match(screen, /> /, 'a prompt');
    assert.ok(!/"level"|\bINFO\b|\bDEBUG\b|daemon started/.test(screen), `no log line on the screen:\n${screen}`);
    const logFile = path.join(ws.dir, 'logs', 'membot.log');
    assert.equal((await stat(logFile)).mode & 0o777, 0o600);
    const logged = await readFile(logFile, 'utf8');
    assert.match(logged, /daemon started/);
    assert.match(logged, /end of input/, 'it stopped as at the end of input');
  } finally {
    run.kill();
    await run.exited;
    await llm.close();
    await ws.cleanup();
  }
});
