/**
 * The real entry point (`node --import tsx src/main.ts`) in Telegram mode: TELEGRAM_BOT_TOKEN
 * and TELEGRAM_API_ROOT point it at the emulator, OPENAI_BASE_URL at the fake LLM.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startTelegramEmulator, type TelegramEmulator } from '../../helpers/telegram.js';
import { lastUserText, startFakeLlm, text } from '../../helpers/fake-llm.js';
import { tempDir } from '../../helpers/workspace.js';
import { childEnv, telegramDaemonEnv } from '../../helpers/child.js';
import { patient, waitFor } from '../../helpers/wait.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const OWNER = 111;

interface Run {
  child: ChildProcessWithoutNullStreams;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A script in a child; the guard (counted from the spawn, the start under tsx included) only ends one that hangs. */
function run(script: string, args: string[], env: Record<string, string>, cwd: string, timeoutMs = patient(60_000)): Run {
  const child = spawn(process.execPath, ['--import', tsxLoader, path.join(repoRoot, script), ...args], {
    cwd,
    env: childEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdout.on('data', (c: Buffer) => (stderr += c.toString()));
  const guard = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal });
    }),
  );
  return { child, stderr: () => stderr, exited };
}

async function withDaemon(
  responder: Parameters<typeof startFakeLlm>[0],
  fn: (ctx: { tg: TelegramEmulator; llm: Awaited<ReturnType<typeof startFakeLlm>>; daemon: Run; workspace: string }) => Promise<void>,
  prepare?: (tg: TelegramEmulator) => void,
): Promise<void> {
  const tg = await startTelegramEmulator();
  prepare?.(tg);
  const llm = await startFakeLlm(responder);
  const ws = await tempDir();
  const env = telegramDaemonEnv({ llmUrl: llm.url, workspace: ws.dir, tg }, { TELEGRAM_ALLOWED_USERS: String(OWNER) });
  // The temp dir as cwd: no .env of the repo is read.
  const daemon = run('src/main.ts', [], env, ws.dir);
  try {
    await fn({ tg, llm, daemon, workspace: ws.dir });
  } finally {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
    await tg.close();
    await llm.close();
    await ws.cleanup();
  }
}

test('the daemon serves a conversation end to end: reply, /status, a stranger refused then paired', async () => {
  await withDaemon(undefined, async ({ tg, llm, daemon, workspace }) => {
    await waitFor(() => /daemon started/.test(daemon.stderr()) || daemon.child.exitCode !== null, 20_000, 'the daemon to start');
    assert.match(daemon.stderr(), /"channel":"telegram"/);
    assert.ok(!daemon.stderr().includes(tg.token), 'the bot token never appears in the logs');

    const owner = tg.user({ userId: OWNER });
    await owner.say('hello bot');
    assert.equal((await tg.waitForBotMessages(OWNER, 1, 15_000))[0]!.text, 'echo: hello bot');
    await owner.say('/status full');
    assert.match((await tg.waitForBotMessages(OWNER, 2, 15_000))[1]!.text, /Session: telegram:111/);

    const stranger = tg.user({ userId: 333 });
    await stranger.say('let me in');
    const codeMsg = (await tg.waitForBotMessages(333, 1, 15_000))[0]!.text;
    const code = /pairing code: ([A-Z2-9]{8})/.exec(codeMsg)![1]!;
    assert.ok(daemon.stderr().includes(code), 'the code is in the daemon log');

    const pair = run('src/cli/pair.ts', ['approve', code], { WORKSPACE_DIR: workspace }, workspace);
    assert.equal((await pair.exited).code, 0, pair.stderr());
    const list = run('src/cli/pair.ts', ['list'], { WORKSPACE_DIR: workspace }, workspace);
    assert.equal((await list.exited).code, 0);
    assert.match(list.stderr(), /Approved users \(1\):\n {2}333/);

    await stranger.say('thanks');
    assert.equal((await tg.waitForBotMessages(333, 2, 15_000))[1]!.text, 'echo: thanks');
    assert.deepEqual(llm.chatRequests().map(lastUserText), ['hello bot', 'thanks']);
  });
});

test("SIGTERM during a turn: polling stops, the running turn's reply is still delivered, exit 0", async () => {
  // The model's answer is held until the daemon has taken the signal: the reply can only arrive
  // if the daemon waits for the running turn, however slow the machine.
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  await withDaemon(
    async (req) => {
      await released;
      return text(`echo: ${lastUserText(req)}`);
    },
    async ({ tg, llm, daemon }) => {
      await waitFor(() => /daemon started/.test(daemon.stderr()) || daemon.child.exitCode !== null, 20_000, 'the daemon to start');
      await tg.user({ userId: OWNER }).say('slow question');
      await waitFor(() => llm.chatRequests().length > 0, 15_000, 'the request to reach the LLM');
      daemon.child.kill('SIGTERM');
      await waitFor(() => /stopping: no new messages/.test(daemon.stderr()) || daemon.child.exitCode !== null, 10_000, 'the daemon to take the signal');
      assert.equal(tg.botMessages(OWNER).length, 0, 'no reply before the answer is released');
      release();
      const { code, signal } = await daemon.exited;
      assert.equal(code, 0, `exit code (signal ${signal}); log:\n${daemon.stderr()}`);
      assert.deepEqual(
        tg.botMessages(OWNER).map((m) => m.text),
        ['echo: slow question'],
      );
      const pollsAtExit = tg.callsOf('getUpdates').length;
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(tg.callsOf('getUpdates').length, pollsAtExit, 'no polling after exit');
    },
  ).finally(release);
});

test('a token Telegram refuses: exit 1 with one line, and the token is not printed', async () => {
  await withDaemon(
    undefined,
    async ({ daemon, tg }) => {
      const { code } = await daemon.exited;
      assert.equal(code, 1);
      const lines = daemon
        .stderr()
        .split('\n')
        .filter((l) => l.startsWith('telegram:'));
      assert.equal(lines.length, 1, daemon.stderr());
      assert.match(lines[0]!, /401/);
      assert.ok(!daemon.stderr().includes(tg.token));
    },
    (tg) => tg.intercept('getMe', () => ({ status: 401, json: { ok: false, error_code: 401, description: 'Unauthorized' } })),
  );
});
