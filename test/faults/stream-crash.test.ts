/**
 * kill -9 mid-stream (issue 16): the real daemon (src/main.ts) streams two answers at once — a
 * private chat with drafts, a group with an edited placeholder — and is killed with SIGKILL
 * while both are half written, then started again. The journal hands both messages to the new
 * run: the private chat gets its answer once (drafts are ephemeral, nothing to tidy), the group's
 * placeholder is taken over and finished in place (telegram/placeholders.ts). Neither chat
 * ever shows a second copy of the finished answer, nor a leftover fragment.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTelegramEmulator } from '../helpers/telegram.js';
import { startFakeLlm, text } from '../helpers/fake-llm.js';
import { tempDir } from '../helpers/workspace.js';
import { startDaemonChild, telegramDaemonEnv } from '../helpers/child.js';
import { patient, waitFor } from '../helpers/wait.js';
import { RESTARTED_TEXT } from '../../src/channels/telegram/stream-preview.js';

const GROUP = -1009;
const ANSWER = `**Done**: ${Array.from({ length: 300 }, (_, i) => `part${i}`).join(' ')}.`;
const FINAL_HTML = `<b>Done</b>: ${ANSWER.slice('**Done**: '.length)}`;

test('kill -9 mid-stream: after the restart each chat has its answer once, the group placeholder finished in place', {
  timeout: patient(120_000),
}, async () => {
  const tg = await startTelegramEmulator();
  let pace = 60; // the first run streams slowly (~2,700 characters, 10 a step): killed halfway
  const llm = await startFakeLlm(() => ({ ...text(ANSWER), stream: { chunkChars: 10, paceMs: pace } }));
  const ws = await tempDir('membot-stream-crash-');
  const env = telegramDaemonEnv(
    { llmUrl: llm.url, workspace: ws.dir, tg },
    { TELEGRAM_ALLOWED_USERS: '111', TELEGRAM_ALLOWED_GROUPS: String(GROUP), TELEGRAM_DM_POLICY: 'allowlist' },
  );
  let daemon = startDaemonChild(env, ws.dir);
  try {
    await daemon.started;
    await tg.user({ userId: 111 }).say('write the long answer');
    await tg.user({ userId: 301, chatId: GROUP, type: 'supergroup', chatTitle: 'Team' }).say('@TestNameBot write the long answer');
    const placeholdersFile = path.join(ws.dir, 'telegram', 'placeholders.json');
    await waitFor(() => tg.callsOf('sendMessageDraft').length >= 2 && tg.callsOf('editMessageText').length >= 1, 60_000, 'both answers half shown');
    await waitFor(() => tg.botMessages(GROUP).length === 1, 5000, 'the group placeholder');
    const recorded = JSON.parse(await readFile(placeholdersFile, 'utf8'));
    assert.equal(recorded.length, 1, 'the placeholder is on disk before it matters');
    assert.ok(
      llm.streams.every((s) => s.endedAt === undefined),
      'both streams still running',
    );
    daemon.child.kill('SIGKILL');
    await new Promise((r) => daemon.child.once('close', r));
    const fragment = tg.botMessages(GROUP)[0]!.text;
    assert.ok(fragment.length < FINAL_HTML.length, 'killed with the group answer half written');
    assert.equal(tg.botMessages(111).length, 0, 'nothing but drafts in the private chat yet');

    pace = 5;
    daemon = startDaemonChild(env, ws.dir);
    await daemon.started;
    await waitFor(() => tg.botMessages(111).length >= 1 && tg.botMessages(GROUP)[0]?.text === FINAL_HTML, 60_000, 'both answers finished');
    await new Promise((r) => setTimeout(r, 1500)); // anything more would show now
    assert.deepEqual(
      tg.botMessages(111).map((m) => m.text),
      [FINAL_HTML],
      'private chat: the answer once',
    );
    assert.deepEqual(
      tg.botMessages(GROUP).map((m) => m.text),
      [FINAL_HTML],
      'group: the placeholder became the answer; no second copy',
    );
    assert.ok(!tg.botMessages().some((m) => m.text === RESTARTED_TEXT));
    assert.equal(llm.chatRequests().length, 4, 'each message answered again after the restart');
    assert.deepEqual(JSON.parse(await readFile(placeholdersFile, 'utf8')), [], 'no placeholder left open');
  } finally {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGKILL');
    await tg.close();
    await llm.close();
    await ws.cleanup();
  }
});
