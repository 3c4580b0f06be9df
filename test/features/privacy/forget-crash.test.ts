/**
 * kill -9 during `/forget confirm` (issue 33, item 4): the real daemon (src/main.ts, Telegram
 * channel against the emulator, fake LLM) holds a word in a fact, MEMORY.md, history, notes,
 * indexed messages, the session and a pending reminder; `/forget confirm` is killed at a chosen
 * step (MEMBOT_CRASH_AT, src/core/crash-point.ts): just after the reminders were taken (the
 * rest all still there), and after memory.db's rows were deleted but before their freed bytes
 * were scrubbed. At the next start the forget is finished before anything else: no byte of the
 * word is left anywhere in the workspace (memory.db and its -wal, the forget's own record
 * included), the reminder is gone, and the chat is told.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startTelegramEmulator, waitFor } from '../../helpers/telegram.js';
import { lastUserText, promptKind, startFakeLlm, text, toolCalls, type Responder } from '../../helpers/fake-llm.js';
import { filesContaining, tempDir } from '../../helpers/workspace.js';
import { startDaemonChild, telegramDaemonEnv } from '../../helpers/child.js';

const WORD = 'PAPAYA42';
const USER = 5151;

const responder: Responder = (req) => {
  if (promptKind(req) === 'consolidation') {
    return text(
      JSON.stringify({
        history_entry: `[2026-03-10 12:00] The secret word is ${WORD}.`,
        memory_update: `# Memory\n- The secret word is ${WORD}.\n`,
        facts: [`The secret word is ${WORD}.`],
      }),
    );
  }
  if (req.body.messages.at(-1).role === 'tool') return text('Scheduled.');
  const said = lastUserText(req);
  if (/^remind me/.test(said))
    return toolCalls([{ name: 'schedule_message', args: { at: new Date(Date.now() + 86_400_000).toISOString(), text: `say ${WORD}` } }]);
  return text(`echo: ${said}`);
};

function pendingReminders(workspace: string): string[] {
  const db = new Database(path.join(workspace, 'schedules.db'), { readonly: true });
  try {
    return (db.prepare("SELECT text FROM reminders WHERE status = 'pending'").all() as Array<{ text: string }>).map((r) => r.text);
  } finally {
    db.close();
  }
}

for (const step of ['forget:reminders', 'forget:rows']) {
  test(`risk: kill -9 during /forget confirm leaves the words behind and says nothing — killed at ${step}, the next start finishes it and tells the chat; no byte of the word is left`, {
    timeout: 180_000,
  }, async () => {
    const tg = await startTelegramEmulator();
    const llm = await startFakeLlm(responder);
    const ws = await tempDir('membot-forget-crash-');
    const env = telegramDaemonEnv({ llmUrl: llm.url, workspace: ws.dir, tg }, { TELEGRAM_ALLOWED_USERS: String(USER), TELEGRAM_DM_POLICY: 'allowlist' });
    const user = tg.user({ userId: USER });
    const said = async (words: string, replies: number) => {
      await user.say(words);
      await waitFor(() => tg.botMessages(USER).length >= replies, 60_000, `the reply to ${words}`);
    };
    let daemon = startDaemonChild({ ...env, MEMBOT_CRASH_AT: step }, ws.dir);
    try {
      await daemon.started;
      await said(`remember: the secret word is ${WORD}`, 1);
      await said(`remind me tomorrow to say ${WORD}`, 2);
      await said('/new', 3); // consolidation: MEMORY.md, history, a fact
      await said(`/forget ${WORD}`, 4);
      assert.match(tg.botMessages(USER)[3]!.text, /1 pending reminder/);
      await user.say('/forget confirm');
      await new Promise((r) => daemon.child.once('close', r));
      assert.equal(daemon.child.signalCode, 'SIGKILL', `killed at ${step}:\n${daemon.log().slice(-2000)}`);
      assert.equal(tg.botMessages(USER).length, 4, 'nothing said before the kill');
      assert.ok((await filesContaining(ws.dir, WORD)).length > 0, 'the kill left the word behind');

      daemon = startDaemonChild(env, ws.dir);
      await daemon.started;
      await waitFor(() => tg.botMessages(USER).length >= 5, 60_000, 'the chat to be told');
      daemon.child.kill('SIGTERM');
      await new Promise((r) => daemon.child.once('close', r));

      const told = tg
        .botMessages(USER)
        .slice(4)
        .map((m) => m.text);
      assert.equal(told.length, 1, `told once: ${JSON.stringify(told)}`);
      assert.match(
        told[0]!,
        /^🗑 The bot restarted while it was forgetting what you asked with \/forget confirm; that is finished now\. Removed: .*1 fact.*1 pending reminder\./,
      );
      assert.doesNotMatch(told[0]!, new RegExp(WORD, 'i'), 'the notice does not repeat the words');
      assert.deepEqual(await filesContaining(ws.dir, WORD), [], 'no byte of the word anywhere in the workspace (memory.db and its -wal included)');
      assert.deepEqual(pendingReminders(ws.dir), [], 'the reminder is gone');
      assert.deepEqual(await readdir(path.join(ws.dir, 'forgetting')), [], "the forget's record is gone once the chat was told");
    } finally {
      if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGKILL');
      await tg.close();
      await llm.close();
      await ws.cleanup();
    }
  });
}
