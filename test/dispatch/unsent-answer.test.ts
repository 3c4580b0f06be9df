/**
 * kill -9 between an answer's save and its send (src/dispatch/turn-run.ts, the journal's reply
 * mark in src/queue/inbox.ts): the real daemon (src/main.ts, Telegram channel against the
 * emulator, fake LLM) is killed at a chosen point of ResponseDelivery (MEMBOT_CRASH_AT,
 * src/core/crash-point.ts). Killed before the answer was saved, the next start runs the turn
 * again; killed after it was saved and before it left, the next start sends the saved answer,
 * once, without asking the model again; killed after it left, the next start sends nothing more.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramEmulator } from '../helpers/telegram.js';
import { lastUserText, startFakeLlm, text } from '../helpers/fake-llm.js';
import { tempDir } from '../helpers/workspace.js';
import { startDaemonChild, telegramDaemonEnv } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';

const USER = 6161;

const cases = [
  {
    point: 'answer:marked',
    name: 'a kill after the answer was marked and before it was saved: the next start runs the turn again and answers once',
    before: 0,
    asks: 2,
  },
  {
    point: 'reply:saved',
    name: 'risk: a kill after the answer was saved and before it was sent leaves the message unanswered for good — the next start sends the saved answer, once, without asking the model again',
    before: 0,
    asks: 1,
  },
  {
    point: 'reply:sent',
    name: 'a kill after the answer was sent and before its message was closed: the next start sends nothing more (never twice)',
    before: 1,
    asks: 1,
  },
];

for (const c of cases) {
  test(c.name, { timeout: 180_000 }, async () => {
    const tg = await startTelegramEmulator();
    const llm = await startFakeLlm((req) => text(`echo: ${lastUserText(req)}`));
    const ws = await tempDir('membot-unsent-');
    const env = telegramDaemonEnv(
      { llmUrl: llm.url, workspace: ws.dir, tg },
      { TELEGRAM_ALLOWED_USERS: String(USER), TELEGRAM_DM_POLICY: 'allowlist', STREAMING: 'off' },
    );
    const user = tg.user({ userId: USER });
    const answers = () => tg.botMessages(USER).filter((m) => m.text === 'echo: what is the time in Lisbon?');
    let daemon = startDaemonChild({ ...env, MEMBOT_CRASH_AT: c.point }, ws.dir);
    try {
      await daemon.started;
      await user.say('what is the time in Lisbon?');
      await new Promise((r) => daemon.child.once('close', r));
      assert.equal(daemon.child.signalCode, 'SIGKILL', `killed at ${c.point}:\n${daemon.log().slice(-2000)}`);
      assert.equal(answers().length, c.before, `answers before the restart (killed at ${c.point})`);
      const asked = llm.chatRequests().length;

      daemon = startDaemonChild(env, ws.dir);
      await daemon.started;
      await user.say('and in Porto?');
      await waitFor(() => tg.botMessages(USER).some((m) => m.text === 'echo: and in Porto?'), 60_000, 'the next message answered');
      const texts = tg.botMessages(USER).map((m) => m.text);
      assert.deepEqual(texts, ['echo: what is the time in Lisbon?', 'echo: and in Porto?'], 'each answered once, in order, nothing else said');
      assert.equal(
        llm.chatRequests().length,
        asked + c.asks,
        c.asks === 1 ? 'the model was asked only for the new message' : 'asked again, and for the new message',
      );
    } finally {
      if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
        daemon.child.kill('SIGTERM');
        await new Promise((r) => daemon.child.once('close', r));
      }
      await tg.close();
      await llm.close();
      await ws.cleanup();
    }
  });
}
