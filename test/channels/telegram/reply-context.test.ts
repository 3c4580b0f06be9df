import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Update } from 'telegraf/types';
import { readUpdate, type BotIdentity } from '../../../src/channels/telegram/inbound.js';
import { QUOTE_LIMIT } from '../../../src/channels/telegram/reply-context.js';
import { startTelegramBot } from '../../helpers/telegram.js';
import { lastUserText } from '../../helpers/fake-llm.js';

const BOT: BotIdentity = { id: 666, username: 'MemBot' };
let seq = 0;

function msg(fields: Record<string, unknown>): Update {
  return {
    update_id: ++seq,
    message: { message_id: seq, date: 0, chat: { id: 42, type: 'private' }, from: { id: 42, is_bot: false, first_name: 'Ann' }, ...fields },
  } as unknown as Update;
}

test('a reply carries the quoted text, marked as a quote and cut to 500 characters', () => {
  const long = 'x'.repeat(QUOTE_LIMIT + 300);
  const r = readUpdate(
    msg({ text: 'what did you mean by this?', reply_to_message: { message_id: 1, text: long, from: { id: 666, is_bot: true, first_name: 'Bot' } } }),
    BOT,
  );
  assert.equal(r.kind, 'text');
  if (r.kind !== 'text') return;
  assert.equal(r.text, `[Quoting a message by you]\n> ${'x'.repeat(QUOTE_LIMIT)}…\n\nwhat did you mean by this?`);

  const other = readUpdate(
    msg({ text: 'agreed', reply_to_message: { message_id: 2, text: 'line one\nline two', from: { id: 7, is_bot: false, first_name: 'Bob' } } }),
    BOT,
  );
  assert.equal(other.kind === 'text' && other.text, '[Quoting a message by Bob]\n> line one\n> line two\n\nagreed');
});

test('the part the user highlighted wins over the whole message; captions count; commands and empty quotes do not', () => {
  const partial = readUpdate(
    msg({
      text: 'why?',
      quote: { text: 'only this', position: 0 },
      reply_to_message: { message_id: 1, text: 'only this and much more', from: { id: 666, is_bot: true } },
    }),
    BOT,
  );
  assert.equal(partial.kind === 'text' && partial.text, '[Quoting a message by you]\n> only this\n\nwhy?');
  const caption = readUpdate(
    msg({ text: 'where?', reply_to_message: { message_id: 1, caption: 'our beach', photo: [], from: { id: 9, first_name: 'Cy' } } }),
    BOT,
  );
  assert.equal(caption.kind === 'text' && caption.text, '[Quoting a message by Cy]\n> our beach\n\nwhere?');
  const command = readUpdate(msg({ text: '/new', reply_to_message: { message_id: 1, text: 'old', from: { id: 666 } } }), BOT);
  assert.equal(command.kind === 'text' && command.text, '/new', 'a command sent as a reply stays a command');
  const sticker = readUpdate(msg({ text: 'nice', reply_to_message: { message_id: 1, sticker: {}, from: { id: 666 } } }), BOT);
  assert.equal(sticker.kind === 'text' && sticker.text, 'nice');
});

test('end to end: the quote reaches the model as part of the user message and is kept in the session', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: '111' } });
  try {
    const owner = bot.tg.user({ userId: 111 });
    await owner.say('hello');
    await bot.tg.waitForBotMessages(111, 1);
    const answered = bot.tg.server.storage.botMessages.at(-1)!;
    await owner.say('what did you mean by this?', {
      reply_to_message: { message_id: answered.messageId, text: 'echo: hello', from: { id: 666, is_bot: true, first_name: 'Bot' } },
    });
    await bot.tg.waitForBotMessages(111, 2);
    const req = bot.llm.chatRequests()[1]!;
    const last = (req.body.messages as Array<{ role: string; content: string }>).at(-1)!;
    assert.equal(last.role, 'user', 'the quote travels in the user role');
    assert.match(lastUserText(req), /^\[Quoting a message by .+\]\n> echo: hello\n\nwhat did you mean by this\?$/);
    const session = await bot.sessionFile(111);
    assert.match(session.messages[2].content, /> echo: hello/);
  } finally {
    await bot.close();
  }
});
