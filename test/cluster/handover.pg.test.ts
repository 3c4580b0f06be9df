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
import type pg from 'pg';
import { startTelegramEmulator, type TelegramEmulator } from '../helpers/telegram.js';
import { lastUserText, promptKind, startFakeLlm, text, type FakeLlm } from '../helpers/fake-llm.js';
import { patient, waitFor } from '../helpers/wait.js';
import { startTwoDaemons, type Daemon } from './two-daemons.js';

const USER = 211;
const QUESTION = 'what is the capital of Peru?';
const ANSWER = 'Lima is the capital of Peru.';
const NEXT = 'and of Chile?';
const NEXT_ANSWER = 'Santiago is the capital of Chile.';

/**
 * Both daemons up, the question sent, the model asked: the daemon holding the chat (the one
 * asking) is frozen past the lease until the other one has taken the chat and answered.
 */
async function frozenHolder(two: { db: pg.Client; daemons: Daemon[] }, tg: TelegramEmulator, llm: FakeLlm): Promise<Daemon> {
  await Promise.all(two.daemons.map((d) => d.started));
  await tg.user({ userId: USER }).say(QUESTION);
  await waitFor(() => llm.chatRequests().some((r) => promptKind(r) === 'chat'), 60_000, 'the answer asked of the model');
  const { rows } = await two.db.query<{ pid: number }>('SELECT p.pid FROM inbox_claims c JOIN cluster_processes p ON p.id = c.owner');
  const holder = two.daemons.find((d) => d.child.pid === rows[0]?.pid);
  assert.ok(holder, `a process holds the chat: ${JSON.stringify(rows)}`);
  holder.child.kill('SIGSTOP');
  await waitFor(() => tg.botMessages(USER).length >= 1, 60_000, 'the message answered by the other process');
  return holder;
}

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
    // Frozen past the lease: the other process takes the chat over and answers it meanwhile.
    const late = await frozenHolder(two, tg, llm);
    frozen = late;
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

test("risk: a process frozen past the lease whose model answered meanwhile sends and saves that answer as it comes back, before its heartbeat hears the chat is another's — it checks it still holds the chat first", {
  timeout: patient(180_000),
}, async () => {
  const tg = await startTelegramEmulator();
  // The first answer comes only when the test lets it: while the process that asked is frozen.
  let letGo!: () => void;
  const held = new Promise<void>((r) => (letGo = r));
  let chats = 0;
  const llm = await startFakeLlm(async (req) => {
    if (promptKind(req) !== 'chat') return text('nothing to note');
    if (chats++ === 0) await held;
    return text(ANSWER);
  });
  const two = await startTwoDaemons({ llm, tg }, { name: 'fence', users: [USER], env: { STREAMING: 'off' } });
  const { db } = two;
  let frozen: Daemon | undefined;
  try {
    const late = await frozenHolder(two, tg, llm);
    frozen = late;
    // The model's answer to the frozen process is waiting in its socket when it wakes up.
    letGo();
    await new Promise((r) => setTimeout(r, 500));
    late.child.kill('SIGCONT');
    frozen = undefined;
    await waitFor(() => /turn\.handed_over|taken by another process/.test(late.log()), 30_000, 'the late process to hand the chat over, or hear it lost');
    await new Promise((r) => setTimeout(r, 2_000)); // anything more would show now
    assert.deepEqual(
      tg.botMessages(USER).map((m) => m.text),
      [ANSWER],
      'the user got one answer',
    );
    const { rows: kept } = await db.query<{ body: string }>('SELECT body FROM session_messages WHERE chat LIKE $1 ORDER BY pos', [`%:${USER}`]);
    assert.deepEqual(
      kept.map((r) => (JSON.parse(r.body) as { role: string }).role),
      ['user', 'assistant'],
      'the session holds the message once, with its one answer',
    );
  } finally {
    frozen?.child.kill('SIGCONT');
    await two.close();
    await tg.close();
    await llm.close();
  }
});
