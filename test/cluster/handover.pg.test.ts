/**
 * Several processes, one bot (issue 36, "every message answered exactly once"): a process that
 * is alive but frozen past CLUSTER_LEASE_MS while it answers loses the chat to another process,
 * which answers the message. When the late process comes back and hears it lost the chat, its
 * turn is handed over quietly (app/cluster.ts, ChatStops.handOver): nothing sent, nothing saved,
 * the journal entry left to the new holder — not stopped as by /stop, which would show a
 * "Stopped" note and write a second copy of the message into the chat's session.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramEmulator } from '../helpers/telegram.js';
import { lastUserText, promptKind, startFakeLlm, text } from '../helpers/fake-llm.js';
import { patient, waitFor } from '../helpers/wait.js';
import { startTwoDaemons, type Daemon } from './two-daemons.js';

const USER = 211;
const QUESTION = 'what is the capital of Peru?';
const ANSWER = 'Lima is the capital of Peru.';
const NEXT = 'and of Chile?';
const NEXT_ANSWER = 'Santiago is the capital of Chile.';

test('risk: a process frozen past the lease while answering loses the chat, then stops the turn as /stop does — the other process answers once, the late one says and saves nothing', {
  timeout: patient(180_000),
}, async () => {
  const tg = await startTelegramEmulator();
  // The first answer is slow (the process running it is frozen meanwhile); the one run again elsewhere is quick.
  let chats = 0;
  const llm = await startFakeLlm((req) => {
    if (promptKind(req) !== 'chat') return text('nothing to note');
    if (lastUserText(req).includes(NEXT)) return text(NEXT_ANSWER);
    return chats++ === 0 ? { ...text(ANSWER), delayMs: 8_000 } : text(ANSWER);
  });
  const two = await startTwoDaemons({ llm, tg }, { name: 'handover', users: [USER], env: { STREAMING: 'off' } });
  const { db, daemons } = two;
  let frozen: Daemon | undefined;
  try {
    await Promise.all(daemons.map((d) => d.started));
    await tg.user({ userId: USER }).say(QUESTION);
    await waitFor(() => llm.chatRequests().some((r) => promptKind(r) === 'chat'), 60_000, 'the answer asked of the model');
    const { rows } = await db.query<{ pid: number }>('SELECT p.pid FROM inbox_claims c JOIN cluster_processes p ON p.id = c.owner');
    const late = daemons.find((d) => d.child.pid === rows[0]?.pid);
    assert.ok(late, `a process holds the chat: ${JSON.stringify(rows)}`);
    // Frozen past the lease: the other process takes the chat over and answers it meanwhile.
    late.child.kill('SIGSTOP');
    frozen = late;
    await waitFor(() => tg.botMessages(USER).length >= 1, 60_000, 'the message answered by the other process');
    late.child.kill('SIGCONT');
    frozen = undefined;
    await waitFor(() => /taken by another process/.test(late.log()), 30_000, 'the late process hears it lost the chat');
    // Its slow model call comes back within the next seconds: anything it would say or save shows by then.
    await new Promise((r) => setTimeout(r, 6_000));

    assert.deepEqual(
      tg.botMessages(USER).map((m) => m.text),
      [ANSWER],
      'the user got one answer, and no "Stopped" note',
    );
    // The chat's next message, run by the late process (the other one frozen meanwhile): its copy
    // of the session does not keep the words it never saved — it reads the chat afresh.
    const other = daemons.find((d) => d !== late)!;
    other.child.kill('SIGSTOP');
    frozen = other;
    await tg.user({ userId: USER }).say(NEXT);
    await waitFor(() => tg.botMessages(USER).length >= 2, 60_000, 'the next message answered by the late process');
    other.child.kill('SIGCONT');
    frozen = undefined;
    await new Promise((r) => setTimeout(r, 1_500)); // anything more would show now

    assert.deepEqual(
      tg.botMessages(USER).map((m) => m.text),
      [ANSWER, NEXT_ANSWER],
      'each message answered once',
    );
    const { rows: open } = await db.query<{ n: string }>('SELECT count(*) AS n FROM inbox WHERE done_at IS NULL');
    assert.equal(Number(open[0]!.n), 0, 'nothing left open in the journal');
    const { rows: kept } = await db.query<{ body: string }>('SELECT body FROM session_messages WHERE chat LIKE $1 ORDER BY pos', [`%:${USER}`]);
    const messages = kept.map((r) => JSON.parse(r.body) as { role: string; content: unknown });
    assert.deepEqual(
      messages.map((m) => [m.role, m.content]),
      [
        ['user', QUESTION],
        ['assistant', ANSWER],
        ['user', NEXT],
        ['assistant', NEXT_ANSWER],
      ],
      'the session holds each message once, each followed by its one answer',
    );
  } finally {
    frozen?.child.kill('SIGCONT');
    await two.close();
    await tg.close();
    await llm.close();
  }
});
