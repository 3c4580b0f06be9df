/**
 * Issue 11, "no deadline per turn, no flood limit": a hung or stalling model held a chat slot
 * for minutes (every other chat waited once the slots were taken), and one user could queue
 * any number of messages, each an LLM call. Checked here: TURN_TIMEOUT_MS ends a turn with an
 * apology and frees its slot; RATE_LIMIT_PER_MINUTE and MAX_QUEUED_PER_CHAT answer the excess
 * with one line and no LLM call — and in every case the journal entry is closed and the
 * user's words are either saved in the session or the user is told to send them again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../helpers/app.js';
import { echoResponder, lastUserText, text, toolCalls, type Responder } from '../helpers/fake-llm.js';
import { FileInbox } from '../../src/queue/file-inbox.js';

async function sessionUserTexts(bot: TestBot, chatId: string): Promise<string[]> {
  const s = JSON.parse(await readFile(path.join(bot.workspace, 'sessions', `test:${chatId}.json`), 'utf8'));
  return s.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content);
}

async function openJournalEntries(bot: TestBot): Promise<number> {
  return (await new FileInbox(path.join(bot.workspace, 'inbox.jsonl')).unfinished()).entries.length;
}

test('risk: a hung model holds a chat slot for minutes and every other chat waits — TURN_TIMEOUT_MS apologises and frees the slot', async () => {
  const responder: Responder = (req, i) => (lastUserText(req).includes('hang') ? { hang: true } : echoResponder(req, i));
  // One slot, so chat B can only be served once A's turn gives its slot back; the LLM timeout
  // alone would hold it for 30 s.
  const bot = await startTestBot({ responder, env: { MAX_CONCURRENT_TURNS: '1', TURN_TIMEOUT_MS: '1000', LLM_TIMEOUT_MS: '30000' } });
  try {
    const a = bot.send('A', 'this one will hang');
    const t0 = performance.now();
    const b = await bot.send('B', 'am I served?');
    const waited = performance.now() - t0;
    assert.deepEqual(b, ['echo: am I served?']);
    // A generous bound (the deadline is 1 s): without it, B waited for the 30 s LLM timeout.
    assert.ok(waited < 10_000, `chat B waited ${waited.toFixed(0)} ms`);
    const aReplies = await a;
    assert.equal(aReplies.length, 1, `one reply for the stopped turn: ${JSON.stringify(aReplies)}`);
    assert.match(aReplies[0]!, /^Sorry, I could not answer within 1 second, so I stopped \(error id [0-9a-f]{8}\)\. .*send it again/);
    // Nothing lost or left open: the words are in the session, the journal entry is closed.
    assert.deepEqual(await sessionUserTexts(bot, 'A'), ['this one will hang']);
    assert.equal(await openJournalEntries(bot), 0);
    const logged = bot.logs.lines().filter((l) => l.code === 'turn.timeout');
    assert.equal(logged.length, 1, 'one warning with the code');
    // The chat goes on normally, and the stopped turn never answers late.
    assert.deepEqual(await bot.send('A', 'and now?'), ['echo: and now?']);
    assert.deepEqual(bot.replies.get('A'), [aReplies[0], 'echo: and now?']);
  } finally {
    await bot.close();
  }
});

test('risk: one user floods the bot and every message is an LLM call — over RATE_LIMIT_PER_MINUTE they get one line, are saved, and the model is not called', async () => {
  const bot = await startTestBot({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
  try {
    const replies: string[] = [];
    for (let i = 1; i <= 5; i++) replies.push(...(await bot.send('F', `message ${i}`)));
    replies.push(...(await bot.send('F', '/status')));
    assert.deepEqual(replies.slice(0, 3), ['echo: message 1', 'echo: message 2', 'echo: message 3']);
    for (const r of replies.slice(3)) assert.match(r, /^That is more than 3 messages in a minute/);
    assert.match(replies[3]!, /saved this one without answering it/);
    assert.match(replies[5]!, /did not run \/status/);
    assert.equal(bot.llm.chatRequests().length, 3, 'no LLM call for the excess');
    // The words are kept (in order, unanswered); the journal is closed.
    assert.deepEqual(await sessionUserTexts(bot, 'F'), ['message 1', 'message 2', 'message 3', 'message 4', 'message 5']);
    assert.equal(await openJournalEntries(bot), 0);
    // Another chat is not affected.
    assert.deepEqual(await bot.send('G', 'hello'), ['echo: hello']);
  } finally {
    await bot.close();
  }
});

test('risk: one user queues any number of messages — beyond MAX_QUEUED_PER_CHAT waiting they are refused at once, told to send again, no LLM call', async () => {
  const responder: Responder = (req, i) => ({ ...echoResponder(req, i), delayMs: 300 });
  const bot = await startTestBot({ responder, env: { MAX_QUEUED_PER_CHAT: '2', RATE_LIMIT_PER_MINUTE: '100' } });
  try {
    const sends = Array.from({ length: 6 }, (_, i) => bot.send('Q', `burst ${i + 1}`));
    const replies = await Promise.all(sends);
    // One runs, two wait: those three are answered; the other three are refused at once.
    assert.deepEqual(replies.slice(0, 3), [['echo: burst 1'], ['echo: burst 2'], ['echo: burst 3']]);
    for (const r of replies.slice(3)) {
      assert.equal(r.length, 1);
      assert.match(r[0]!, /^I am still answering your earlier messages \(2 waiting\), so I did not take this one\. Please send it again/);
    }
    assert.equal(bot.llm.chatRequests().length, 3);
    assert.equal(await openJournalEntries(bot), 0);
    // Once the queue is short again, messages are taken as usual.
    assert.deepEqual(await bot.send('Q', 'later'), ['echo: later']);
  } finally {
    await bot.close();
  }
});

test('risk: a model that keeps calling a slow tool holds the slot for rounds × the tool timeout — the deadline stops the tool and the turn', async () => {
  const bot = await startTestBot({
    responder: (req) => (lastUserText(req) === 'use the tool' ? toolCalls([{ name: 'slow', args: {} }]) : text(`echo: ${lastUserText(req)}`)),
    env: { TURN_TIMEOUT_MS: '1000', TOOL_TIMEOUT_MS: '30000' },
  });
  let toolSignal: AbortSignal | undefined;
  bot.app.parts.tools.register({
    name: 'slow',
    description: 'never finishes on its own',
    parameters: { type: 'object', properties: {} },
    execute(_args, { signal }) {
      toolSignal = signal;
      return new Promise<string>(() => undefined);
    },
  });
  try {
    const replies = await bot.send('T', 'use the tool');
    assert.equal(replies.length, 1);
    assert.match(replies[0]!, /^Sorry, I could not answer within 1 second, so I stopped/);
    assert.equal(toolSignal?.aborted, true, 'the tool was told to stop');
    assert.equal(bot.llm.chatRequests().length, 1, 'no further round after the deadline');
    // The call without a result is answered as interrupted on the next request; the chat goes on.
    assert.deepEqual(await bot.send('T', 'next'), ['echo: next']);
  } finally {
    await bot.close();
  }
});

test("the terminal (the operator's own, and how the daemon is scripted) is not flood-limited", async () => {
  const bot = await startTestBot({ env: { RATE_LIMIT_PER_MINUTE: '1', MAX_QUEUED_PER_CHAT: '1' } });
  try {
    const got: string[] = [];
    const sends = Array.from({ length: 4 }, (_, i) =>
      bot.app.handle(
        { channel: 'console', chatId: 'local', userId: 'console', text: `line ${i}`, messageId: `c${i}`, receivedAt: new Date() },
        async (r) => void got.push(r),
      ),
    );
    await Promise.all(sends);
    assert.deepEqual(got, ['echo: line 0', 'echo: line 1', 'echo: line 2', 'echo: line 3']);
  } finally {
    await bot.close();
  }
});
