/**
 * Several processes, one bot (issue 36), with answers streamed by editing a placeholder
 * (STREAMING=edit): two daemons on one PostgreSQL share four chats; the one running answers is
 * killed with SIGKILL while they are half written. The other takes the chats over once the dead
 * one's lease ends and finishes each half-written placeholder in place
 * (telegram/placeholders-pg.ts): every chat shows its answer once — no fragment beside a second
 * copy, no "the bot restarted" note.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramEmulator } from '../helpers/telegram.js';
import { startFakeLlm, text } from '../helpers/fake-llm.js';
import { patient, waitFor } from '../helpers/wait.js';
import { startTwoDaemons } from './two-daemons.js';
import { RESTARTED_TEXT } from '../../src/channels/telegram/stream-preview.js';

const USERS = [111, 112, 113, 114];
const ANSWER = `**Done**: ${Array.from({ length: 300 }, (_, i) => `part${i}`).join(' ')}.`;
const FINAL_HTML = `<b>Done</b>: ${ANSWER.slice('**Done**: '.length)}`;

test('risk: a process killed mid-stream leaves half answers that the process taking its chats over answers again beside — each placeholder is finished in place, once', {
  timeout: patient(180_000),
}, async () => {
  const tg = await startTelegramEmulator();
  let pace = 60; // ~2,700 characters, 10 a step: half written when the kill comes
  const llm = await startFakeLlm(() => ({ ...text(ANSWER), stream: { chunkChars: 10, paceMs: pace } }));
  const two = await startTwoDaemons({ llm, tg }, { name: 'stream', users: USERS, env: { STREAMING: 'edit' } });
  const { db, daemons } = two;
  try {
    await Promise.all(daemons.map((d) => d.started));
    for (const u of USERS) await tg.user({ userId: u }).say('write the long answer');
    await waitFor(() => USERS.every((u) => tg.botMessages(u).length === 1), 60_000, 'a placeholder in every chat');
    // The process that runs most of the chats dies with their answers half written.
    const { rows } = await db.query<{ pid: number; n: string }>(
      'SELECT p.pid, count(*) AS n FROM inbox_claims c JOIN cluster_processes p ON p.id = c.owner GROUP BY p.pid ORDER BY n DESC',
    );
    const victim = daemons.find((d) => d.child.pid === rows[0]?.pid);
    assert.ok(victim, `a process holds the chats: ${JSON.stringify(rows)}`);
    assert.ok(
      llm.streams.every((s) => s.endedAt === undefined),
      'every answer still streaming',
    );
    victim.child.kill('SIGKILL');
    await new Promise((r) => victim.child.once('close', r));
    const fragments = USERS.map((u) => tg.botMessages(u)[0]!.text);
    assert.ok(
      fragments.every((f) => f.length < FINAL_HTML.length),
      'killed with answers half written',
    );

    pace = 5;
    await waitFor(() => USERS.every((u) => tg.botMessages(u).some((m) => m.text === FINAL_HTML)), 90_000, 'every chat answered');
    await new Promise((r) => setTimeout(r, 1500)); // anything more would show now
    for (const u of USERS)
      assert.deepEqual(
        tg.botMessages(u).map((m) => m.text),
        [FINAL_HTML],
        `chat ${u}: the placeholder became the answer; no fragment beside a second copy`,
      );
    assert.ok(!tg.botMessages().some((m) => m.text === RESTARTED_TEXT), 'no placeholder told the bot restarted');
  } finally {
    await two.close();
    await tg.close();
    await llm.close();
  }
});
