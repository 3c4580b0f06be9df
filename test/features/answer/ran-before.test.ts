/**
 * kill -9 after a tool that changes something ran and before the turn was saved (the crash point
 * `tool:ended`, src/features/answer/loop.ts): the real daemon (Telegram channel against the
 * emulator, fake LLM) runs the message again at its next start, and the model — as a real one
 * would — asks for the reminder again, "in an hour" from a later clock. The call is not made
 * again (Tool.once, the journal's completed calls): one reminder, one answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramEmulator } from '../../helpers/telegram.js';
import { lastUserText, promptKind, memoryAwareResponder, startFakeLlm, text, toolCalls, toolResults, type RecordedRequest } from '../../helpers/fake-llm.js';
import { tempDir } from '../../helpers/workspace.js';
import { killDaemons, startDaemonChild, telegramDaemonEnv } from '../../helpers/child.js';
import { waitFor } from '../../helpers/wait.js';

const USER = 6262;
const ASK = 'remind me in an hour to water the plants';

function model(req: RecordedRequest) {
  if (promptKind(req) !== 'chat') return memoryAwareResponder(req, 0);
  if (lastUserText(req) !== ASK) return text(`echo: ${lastUserText(req)}`);
  const results = toolResults(req);
  if (results.length === 0)
    return toolCalls([{ name: 'schedule_message', args: { at: new Date(Date.now() + 3_600_000).toISOString(), text: 'water the plants' } }]);
  return text(`Done: ${results[0]!.content.slice(0, 60)}`);
}

test('risk: a kill after a reminder was set and before the turn was saved sets it twice at the next start — the call is not made again, one reminder, one answer', {
  timeout: 180_000,
}, async () => {
  const tg = await startTelegramEmulator();
  const llm = await startFakeLlm(model);
  const ws = await tempDir('membot-ran-before-');
  const env = telegramDaemonEnv(
    { llmUrl: llm.url, workspace: ws.dir, tg },
    { TELEGRAM_ALLOWED_USERS: String(USER), TELEGRAM_DM_POLICY: 'allowlist', STREAMING: 'off' },
  );
  const user = tg.user({ userId: USER });
  let daemon = startDaemonChild({ ...env, MEMBOT_CRASH_AT: 'tool:ended' }, ws.dir);
  try {
    await daemon.started;
    await user.say(ASK);
    await new Promise((r) => daemon.child.once('close', r));
    assert.equal(daemon.child.signalCode, 'SIGKILL', `killed after the tool:\n${daemon.log().slice(-2000)}`);
    assert.deepEqual(tg.botMessages(USER), [], 'nothing sent before the kill');

    daemon = startDaemonChild(env, ws.dir);
    await daemon.started;
    await waitFor(() => tg.botMessages(USER).length > 0, 60_000, 'the recovered message answered');
    await user.say('/reminders');
    await waitFor(() => tg.botMessages(USER).length > 1, 60_000, 'the list of reminders');
    const [answer, list] = tg.botMessages(USER).map((m) => m.text ?? '');
    assert.match(answer!, /^Done: Not run again: "schedule_message" already ran/, 'the model read that the call ran before, and answered once');
    assert.equal(list!.split('\n').filter((l) => l.includes('water the plants')).length, 1, `one reminder, not two:\n${list}`);
    const scheduled = llm.chatRequests().filter((r) => lastUserText(r) === ASK && toolResults(r).length === 0);
    assert.equal(scheduled.length, 2, 'the model asked for the reminder in both runs (the second was not made)');
  } finally {
    await killDaemons([daemon.child]);
    await tg.close();
    await llm.close();
    await ws.cleanup();
  }
});
