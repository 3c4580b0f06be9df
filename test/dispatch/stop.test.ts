/**
 * /stop in the intake (dispatch/stop.ts): answered at once, outside the chat's queue; the running
 * turn is aborted through its deadline controller (the LLM request is dropped), waiting messages
 * are saved unanswered and waiting commands not run; a member stops only what is theirs.
 * The streamed case, with Telegram's preview, is test/channels/telegram/stop.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadedSession, startTestBot } from '../helpers/app.js';

import { echoResponder, lastUserText, type Responder } from '../helpers/fake-llm.js';
import { ChatStops, IDLE_STOP_QUIET_MS, stoppedText } from '../../src/dispatch/stop.js';
import { waitFor } from '../helpers/wait.js';

/** Never answers a message asking to "hang" (the client's abort is the only way out). */
const hangFor: Responder = (req, i) => (/hang/.test(lastUserText(req)) ? { hang: true } : echoResponder(req, i));

test('no streaming: /stop while the model is asked answers at once, the request is dropped, the session gets the marker; the next message runs', async () => {
  const bot = await startTestBot({ responder: hangFor, env: { LLM_TIMEOUT_MS: '60000', TURN_TIMEOUT_MS: '60000' } });
  try {
    const first = bot.send('1', 'please hang');
    await waitFor(() => bot.llm.chatRequests().length === 1, 5_000, 'the request');
    const [stopped] = await bot.send('1', '/stop');
    assert.equal(stopped, 'Stopped before an answer was written; your message is kept. Your next message is answered as usual.');
    // It resolves only once the turn wound down, which needs the hanging request aborted (LLM_TIMEOUT_MS is a minute).
    assert.deepEqual(await first, [], 'the stopped turn itself says nothing more');
    assert.deepEqual(
      loadedSession(bot, '1').messages.map((m) => [m.role, m.content]),
      [
        ['user', 'please hang'],
        ['assistant', '[stopped before answering]'],
      ],
    );
    assert.deepEqual(await bot.send('1', 'hello'), ['echo: hello']);
    const line = bot.logs.lines().find((l) => l.code === 'turn.stopped');
    assert.ok(line, 'logged with its code');
  } finally {
    await bot.close();
  }
});

test('waiting messages are saved unanswered, a waiting command is not run, and the reply counts them', async () => {
  const bot = await startTestBot({ responder: hangFor });
  try {
    await bot.send('1', 'first words');
    const running = bot.send('1', 'hang on this one');
    await waitFor(() => bot.llm.chatRequests().length === 2, 5_000, 'the request');
    const waiting = [bot.send('1', 'a follow-up'), bot.send('1', '/new')];
    const [reply] = await bot.send('1', '/stop');
    assert.equal(
      reply,
      'Stopped before an answer was written; your message is kept. I also skipped 2 waiting messages; they are kept in our conversation, unanswered. Your next message is answered as usual.',
    );
    assert.deepEqual(await Promise.all([running, ...waiting]), [[], [], []], 'no reply for the skipped ones');
    const contents = loadedSession(bot, '1').messages.map((m) => m.content);
    assert.deepEqual(
      contents,
      ['first words', 'echo: first words', 'hang on this one', '[stopped before answering]', 'a follow-up'],
      '/new did not run: nothing cleared',
    );
    assert.equal(bot.llm.chatRequests().length, 2, 'the follow-up never reached the model');
  } finally {
    await bot.close();
  }
});

test('who may stop what: a member only the answer to their own message and their own waiting ones; a manager everything', () => {
  const stops = new ChatStops();
  const asked: string[] = [];
  const running = stops.enter('g', 'ann');
  running.stopTurn = () => (asked.push('stopped'), 'stopped');
  const annWaiting = stops.enter('g', 'ann');
  const bobWaiting = stops.enter('g', 'bob');
  const bob = stops.stop('g', { userId: 'bob', role: 'member' });
  assert.deepEqual(bob, { turn: 'not-yours', skipped: 1, command: undefined });
  assert.deepEqual([annWaiting.stopped, bobWaiting.stopped, asked.length], [false, true, 0]);
  assert.equal(
    stops.text(bob),
    "The answer being written is for someone else's message, so I did not stop it: only they or the bot's owner can. I also skipped 1 waiting message; it is kept in our conversation, unanswered.",
  );
  const owner = stops.stop('g', { userId: 'zed', role: 'owner' });
  assert.deepEqual(owner, { turn: 'stopped', skipped: 1, command: undefined });
  assert.equal(annWaiting.stopped, true);
  stops.leave('g', running);
  stops.leave('g', annWaiting);
  stops.leave('g', bobWaiting);
  assert.equal(stops.text(stops.stop('g', { userId: 'ann', role: 'member' })), 'Nothing to stop.');
  assert.equal(
    new ChatStops(true).text({ turn: 'not-yours', skipped: 0, command: undefined }),
    "The answer being written is for someone else's message, so I did not stop it: only they, the bot's owner or a group admin can.",
  );
  assert.equal(stoppedText('The capital of Fra'), 'The capital of Fra … [stopped]');
  assert.equal(stoppedText('  '), '[stopped before answering]');
});

test('a /stop that did nothing is answered once a minute per chat; one that stops or skips something always is', () => {
  let now = 1_000_000;
  const stops = new ChatStops(false, () => now);
  const nothing = (key: string) => stops.reply(key, stops.stop(key, { userId: 'ann', role: 'member' }));
  assert.equal(nothing('g'), 'Nothing to stop.');
  assert.equal(nothing('g'), undefined, 'the second within the minute is silent');
  assert.equal(nothing('h'), 'Nothing to stop.', 'another chat is answered');
  // Someone else's answer being written: also nothing done, also silent within the minute.
  const bobs = stops.enter('g', 'bob');
  bobs.stopTurn = () => 'stopped';
  assert.equal(nothing('g'), undefined);
  // One that does something is always answered.
  const annWaiting = stops.enter('g', 'ann');
  assert.match(stops.reply('g', stops.stop('g', { userId: 'ann', role: 'member' }))!, /I also skipped 1 waiting message/);
  assert.match(stops.reply('g', stops.stop('g', { userId: 'bob', role: 'member' }))!, /^Stopped\./);
  stops.leave('g', bobs);
  stops.leave('g', annWaiting);
  now += IDLE_STOP_QUIET_MS;
  assert.equal(nothing('g'), 'Nothing to stop.', 'a minute later it is answered again');
});

// A chat lost to another process (docs/cluster.md): ChatStops.handOver, as app/cluster.ts calls it
// when the heartbeat hears another process took the chat. The two-daemon case is
// test/cluster/handover.pg.test.ts.
test('risk: a chat lost to another process is stopped as /stop does — its turn and waiting messages are handed over: nothing said, nothing saved, every entry left open', async () => {
  const bot = await startTestBot({ responder: hangFor, env: { LLM_TIMEOUT_MS: '60000', TURN_TIMEOUT_MS: '60000' } });
  try {
    const running = bot.send('1', 'please hang');
    await waitFor(() => bot.llm.chatRequests().length === 1, 5_000, 'the request');
    const waiting = bot.send('1', 'a follow-up');
    const out = bot.app.parts.chatStops.handOver('test:1');
    assert.deepEqual(out, { turn: 'handed-over', dropped: 1 });
    // Both resolve only once handled: the hanging request was aborted (LLM_TIMEOUT_MS is a minute).
    assert.deepEqual(await Promise.all([running, waiting]), [[], []], 'nothing said, no "Stopped" note');
    const open = await bot.app.parts.inbox.unfinished();
    assert.deepEqual(
      open.entries.map((e) => e.msg.text),
      ['please hang', 'a follow-up'],
      'both entries open, for the process holding the chat now',
    );
    // Neither message reached the session's durable copy (nor its log).
    const sessions = path.join(bot.workspace, 'sessions');
    const files = [...(await readdir(sessions).catch(() => [] as string[])).map((f) => path.join(sessions, f)), `${sessions}.wal.jsonl`];
    for (const f of files) assert.ok(!(await readFile(f, 'utf8').catch(() => '')).includes('hang'), `${f} holds nothing of it`);
    assert.ok(
      bot.logs.lines().some((l) => l.code === 'turn.handed_over'),
      'logged with its code',
    );
  } finally {
    await bot.close();
  }
});
