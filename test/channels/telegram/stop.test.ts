/**
 * /stop (issue 28, item 1) through the real telegraf client, the Bot API emulator and the test
 * stand-in, against the fake LLM streaming slowly: the answer being written is ended at once —
 * its stream abandoned, the text so far kept in the session and finished in the chat marked
 * [stopped], no note or index line written from it — the messages waiting behind it are saved
 * unanswered, and the next message is answered as usual. In a group a member stops only the
 * answer to their own message.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTelegramBot, waitFor, type TelegramTestBot } from '../../helpers/telegram.js';
import { echoResponder, lastUserText, text, type Responder } from '../../helpers/fake-llm.js';
import { FileInbox } from '../../../src/queue/file-inbox.js';

const GROUP = -1009;
const ENV = { TELEGRAM_ALLOWED_USERS: '111', TELEGRAM_ALLOWED_GROUPS: String(GROUP) };
/** ~700 characters in 70 events 50 ms apart: 3.5 s of stream, plain words (no Markdown to render). */
const LONG = Array.from({ length: 140 }, (_, i) => `w${i + 1}`).join(' ');

/** The long answer, streamed slowly, for messages asking for it; the echo otherwise. */
const slowFor =
  (asking: RegExp): Responder =>
  (req, i) =>
    asking.test(lastUserText(req)) ? { ...text(LONG), stream: { chunkChars: 10, paceMs: 50 } } : echoResponder(req, i);

/** Every .md file under the workspace's memory folder (daily notes, MEMORY.md, history), as text. */
async function memoryFiles(bot: TelegramTestBot): Promise<string> {
  const root = path.join(bot.workspace, 'memory');
  const entries = await readdir(root, { recursive: true }).catch(() => [] as string[]);
  const texts = await Promise.all(entries.filter((e) => e.endsWith('.md')).map((e) => readFile(path.join(root, e), 'utf8')));
  return texts.join('\n');
}

async function openJournal(bot: TelegramTestBot): Promise<number> {
  return (await new FileInbox(path.join(bot.workspace, 'inbox.jsonl')).unfinished()).entries.length;
}

test('private chat: /stop mid-stream ends the answer at once, keeps what was written marked [stopped]; the next message runs normally', async () => {
  const bot = await startTelegramBot({ env: ENV, responder: slowFor(/long story/) });
  try {
    const user = bot.tg.user({ userId: 111 });
    await user.say('tell me a long story');
    // Mid-stream: the draft already shows some of it.
    await waitFor(() => bot.tg.callsOf('sendMessageDraft').some((c) => c.body.text.length >= 40), 10_000, 'a draft with text');
    await user.say('/stop');
    const msgs = await bot.tg.waitForBotMessages(111, 2, 10_000);
    const stopped = msgs.find((m) => m.text.endsWith('… [stopped]'));
    const line = msgs.find((m) => m.text.startsWith('Stopped.'));
    assert.ok(stopped, `the answer so far, marked: ${JSON.stringify(msgs.map((m) => m.text))}`);
    assert.equal(line?.text, 'Stopped. What was written so far is kept, marked [stopped]. Your next message is answered as usual.');
    const partial = stopped.text.slice(0, -' … [stopped]'.length);
    assert.ok(partial.length > 0 && partial.length < LONG.length - 100, `a part of the answer (${partial.length} of ${LONG.length} characters)`);
    assert.ok(LONG.startsWith(partial), 'exactly what had been written, from the start');
    // The stream was abandoned, not read to its end: the server was still sending when the client let go.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(bot.llm.streams.length, 1);
    assert.equal(bot.llm.streams[0]!.endedAt, undefined, 'the LLM stream was cut off');
    assert.equal(bot.tg.botMessages(111).length, 2, 'nothing more of the stopped answer arrives');

    const session = await bot.sessionFile(111);
    assert.deepEqual(
      session.messages.map((m: any) => [m.role, m.content]),
      [
        ['user', 'tell me a long story'],
        ['assistant', `${partial} … [stopped]`],
      ],
    );
    assert.doesNotMatch(await memoryFiles(bot), /long story|w1 w2/, 'no daily note from a half answer');
    assert.equal(await openJournal(bot), 0, 'the message and the /stop are closed in the journal');

    await user.say('and now something short');
    const after = await bot.tg.waitForBotMessages(111, 3, 10_000);
    assert.equal(after[2]!.text, 'echo: and now something short');
    const sent = bot.llm.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
    assert.ok(
      sent.some((m) => m.role === 'assistant' && String(m.content).endsWith('… [stopped]')),
      'the model sees the stopped answer as stopped',
    );
    // Its daily note line comes after the reply (MemoryPersist 50): wait for it.
    let notes = '';
    await waitFor(async () => /and now something short/.test((notes = await memoryFiles(bot))), 5_000, 'the note line').catch(() => undefined);
    assert.match(notes, /and now something short/, 'the next exchange gets its note as usual');
    assert.doesNotMatch(notes, /long story/, 'and the stopped one still none');
  } finally {
    await bot.close();
  }
});

test('/stop with nothing running: "Nothing to stop."; no LLM call, nothing saved', async () => {
  const bot = await startTelegramBot({ env: ENV });
  try {
    await bot.tg.user({ userId: 111 }).say('/stop');
    const [msg] = await bot.tg.waitForBotMessages(111, 1);
    assert.equal(msg!.text, 'Nothing to stop.');
    assert.equal(bot.llm.chatRequests().length, 0);
    assert.equal(await openJournal(bot), 0);
  } finally {
    await bot.close();
  }
});

test('a member\'s flood of /stop in a group gets one "Nothing to stop." (Telegram allows ~20 bot messages a minute there), no 👀 or "typing…" each; a real question after it is answered', async () => {
  const bot = await startTelegramBot({ env: ENV });
  try {
    const member = bot.tg.user({ userId: 301, chatId: GROUP, type: 'supergroup', chatTitle: 'Team' });
    const FLOOD = 50;
    for (let i = 0; i < FLOOD; i++) await member.say('/stop');
    await member.say('@TestNameBot are you still there?');
    await bot.tg.waitForBotMessages(GROUP, 2, 20_000);
    // Every /stop handled and closed (they are answered outside the queue: wait for all of them).
    await waitFor(() => bot.logs.lines().filter((l) => l.msg === '/stop').length === FLOOD, 20_000, `${FLOOD} /stop handled`);
    for (const until = Date.now() + 5_000; (await openJournal(bot)) > 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await openJournal(bot), 0, 'every /stop closed in the journal');
    assert.deepEqual(
      bot.tg.botMessages(GROUP).map((m) => m.text),
      ['Nothing to stop.', 'echo: are you still there?'],
    );
    assert.equal(bot.tg.callsOf('setMessageReaction').length, 1, 'the 👀 marks only the question');
    assert.ok(bot.tg.callsOf('sendChatAction').length < 5, 'no "typing…" per /stop');
  } finally {
    await bot.close();
  }
});

test("group: a member cannot stop another member's answer; the asker can — the placeholder is finished marked, their waiting message kept unanswered", async () => {
  const bot = await startTelegramBot({ env: ENV, responder: slowFor(/write a lot/) });
  try {
    const asker = bot.tg.user({ userId: 301, chatId: GROUP, type: 'supergroup', chatTitle: 'Team' });
    const other = bot.tg.user({ userId: 302, chatId: GROUP, type: 'supergroup', chatTitle: 'Team' });
    await asker.say('@TestNameBot write a lot');
    await waitFor(
      () => bot.tg.callsOf('sendMessage').some((c) => String(c.body.chat_id) === String(GROUP) && /^w1/.test(c.body.text)),
      10_000,
      'the placeholder',
    );
    await asker.say('@TestNameBot and a second question');
    await other.say('/stop');
    await waitFor(() => bot.tg.botMessages(GROUP).some((m) => m.text.includes("someone else's")), 5_000, 'the refusal');
    const refusal = bot.tg.botMessages(GROUP).find((m) => m.text.includes("someone else's"))!;
    assert.equal(refusal.text, "The answer being written is for someone else's message, so I did not stop it: only they or the bot's owner can.");
    assert.equal(bot.llm.streams[0]!.endedAt, undefined, 'still streaming');

    await asker.say('/stop');
    await waitFor(() => bot.tg.botMessages(GROUP).some((m) => m.text.startsWith('Stopped.')), 5_000, "the asker's /stop answered");
    const line = bot.tg.botMessages(GROUP).find((m) => m.text.startsWith('Stopped.'))!;
    assert.equal(
      line.text,
      'Stopped. What was written so far is kept, marked [stopped]. I also skipped 1 waiting message; it is kept in our conversation, unanswered. Your next message is answered as usual.',
    );
    await waitFor(() => bot.tg.botMessages(GROUP).some((m) => m.text.endsWith('… [stopped]')), 5_000, 'the placeholder finished as stopped');
    const placeholder = bot.tg.botMessages(GROUP).find((m) => m.text.endsWith('… [stopped]'))!;
    assert.ok(LONG.startsWith(placeholder.text.slice(0, -' … [stopped]'.length)), 'the placeholder holds the text so far');
    assert.equal(
      bot.tg.callsOf('sendMessage').filter((c) => String(c.body.chat_id) === String(GROUP) && /^w1/.test(c.body.text)).length,
      1,
      'one placeholder, edited in place',
    );

    await waitFor(
      () => /second question/.test(bot.app.parts.sessions.get(`telegram:${GROUP}`)?.messages.at(-1)?.content ?? ''),
      5_000,
      'the waiting message saved',
    );
    assert.ok(!bot.llm.chatRequests().some((r) => /second question/.test(lastUserText(r))), 'the waiting message never reached the model');
    // In memory as soon as it is recorded; in the file once its log line is written and the
    // background rewrite ran (flush runs a waiting one now).
    let session: any;
    await waitFor(
      async () => {
        await bot.app.parts.sessions.flush();
        session = await bot.sessionFile(GROUP);
        return session.messages.length >= 3;
      },
      5_000,
      'the session file with the waiting message',
    ).catch(() => undefined);
    const roles = session.messages.map((m: any) => [m.role, m.content.replace(/^@TestNameBot /, '')]);
    assert.deepEqual(roles.slice(0, 2), [
      ['user', 'write a lot'],
      ['assistant', `${placeholder.text}`],
    ]);
    assert.deepEqual(roles[2], ['user', 'and a second question'], 'kept, unanswered');
    assert.equal(roles.length, 3);
    await waitFor(async () => (await openJournal(bot)) === 0, 5_000, 'the journal closed').catch(() => undefined);
    assert.equal(await openJournal(bot), 0, 'every entry closed, the skipped one too');
  } finally {
    await bot.close();
  }
});
