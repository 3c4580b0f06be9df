import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { Update } from 'telegraf/types';
import { readUpdate } from '../../../src/channels/telegram/inbound.js';
import { parseSessionChatId, sessionChatId } from '../../../src/channels/telegram/topics.js';
import { startTelegramBot, type TelegramTestBot } from '../../helpers/telegram.js';
import { lastUserText, promptKind } from '../../helpers/fake-llm.js';

const GROUP = -1003;

test('only real forum topics get a thread id; session chat ids round-trip', () => {
  const base = {
    message_id: 5,
    date: 0,
    chat: { id: GROUP, type: 'supergroup', is_forum: true },
    from: { id: 1, is_bot: false, first_name: 'A' },
    text: '/status',
  };
  const inTopic = readUpdate({ update_id: 1, message: { ...base, is_topic_message: true, message_thread_id: 10 } } as unknown as Update, {
    id: 666,
    username: 'MemBot',
  });
  assert.equal(inTopic.kind === 'text' && inTopic.threadId, 10);
  // In an ordinary group a reply chain has a message_thread_id too; it is not a topic.
  const chain = readUpdate({ update_id: 2, message: { ...base, message_thread_id: 3 } } as unknown as Update, { id: 666, username: 'MemBot' });
  assert.equal(chain.kind === 'text' && chain.threadId, undefined);

  assert.equal(sessionChatId({ chatId: '-1003', threadId: 10 }), '-1003:10');
  assert.deepEqual(parseSessionChatId('-1003:10'), { chatId: '-1003', threadId: 10 });
  assert.deepEqual(parseSessionChatId('-1003'), { chatId: '-1003' });
});

async function session(bot: TelegramTestBot, chatId: string): Promise<Array<{ role: string; content: string }>> {
  await bot.app.parts.sessions.flush();
  try {
    return JSON.parse(await readFile(bot.app.parts.sessions.fileFor('telegram', chatId), 'utf8')).messages;
  } catch {
    return [];
  }
}

test('two topics of one group are separate sessions; replies and typing go to the topic; /new clears only that topic', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: '111', TELEGRAM_ALLOWED_GROUPS: String(GROUP) } });
  try {
    const alice = bot.tg.user({ userId: 301, chatId: GROUP, type: 'supergroup', chatTitle: 'Forum', firstName: 'Alice' });
    const topic = (id: number) => ({ is_topic_message: true, message_thread_id: id });
    await alice.say('@TestNameBot plans for the trip', topic(10));
    await bot.tg.waitForBotMessages(GROUP, 1);
    await alice.say('@TestNameBot the budget', topic(20));
    const msgs = await bot.tg.waitForBotMessages(GROUP, 2);
    assert.deepEqual(
      msgs.map((m) => [m.text, m.raw.message_thread_id]),
      [
        ['echo: plans for the trip', 10],
        ['echo: the budget', 20],
      ],
      'each answer is posted in its own topic',
    );
    const typing = bot.tg.callsOf('sendChatAction').map((c) => c.body.message_thread_id);
    assert.ok(typing.includes(10) && typing.includes(20), 'typing is shown in the topic');

    // The second topic's request does not contain the first topic's conversation.
    const chat = bot.llm.chatRequests().filter((r) => promptKind(r) === 'chat');
    assert.ok(!JSON.stringify(chat[1]!.body.messages).includes('plans for the trip'));
    assert.deepEqual(
      (await session(bot, `${GROUP}:10`)).map((m) => m.content),
      ['plans for the trip', 'echo: plans for the trip'],
    );
    assert.deepEqual(
      (await session(bot, `${GROUP}:20`)).map((m) => m.content),
      ['the budget', 'echo: the budget'],
    );
    assert.deepEqual(await session(bot, String(GROUP)), [], 'the group itself (General) has no messages');

    // /new ends the topic's conversation for everyone: the bot's owner's to do (a member is refused: roles.test.ts).
    const owner = bot.tg.user({ userId: 111, chatId: GROUP, type: 'supergroup', chatTitle: 'Forum', firstName: 'Olga' });
    await owner.say('/new', topic(10));
    const afterNew = await bot.tg.waitForBotMessages(GROUP, 3);
    assert.equal(afterNew[2]!.raw.message_thread_id, 10);
    assert.deepEqual(await session(bot, `${GROUP}:10`), [], '/new cleared topic 10');
    assert.equal((await session(bot, `${GROUP}:20`)).length, 2, 'topic 20 is untouched');

    // The channel's outbound path (recovery after a restart) finds the topic from the session id.
    await bot.channel.send(`${GROUP}:20`, 'still here');
    const last = (await bot.tg.waitForBotMessages(GROUP, 4))[3]!;
    assert.deepEqual([last.text, last.raw.message_thread_id], ['still here', 20]);
    assert.deepEqual(chat.map(lastUserText), ['plans for the trip', 'the budget']);
  } finally {
    await bot.close();
  }
});

test('chat names: a private chat is named after the user, a group after its title, a topic after the name Telegram sends with it (kept when a later message leaves it out)', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: '111,301', TELEGRAM_ALLOWED_GROUPS: String(GROUP) } });
  try {
    const alice = bot.tg.user({ userId: 301, chatId: GROUP, type: 'supergroup', chatTitle: 'Beekeepers', firstName: 'Alice' });
    const created = {
      message_id: 10,
      date: 0,
      chat: { id: GROUP, type: 'supergroup' },
      from: { id: 301, is_bot: false, first_name: 'Alice' },
      forum_topic_created: { name: 'Honey sales', icon_color: 7322096 },
    };
    await alice.say('@TestNameBot prices?', { is_topic_message: true, message_thread_id: 10, reply_to_message: created });
    await bot.tg.waitForBotMessages(GROUP, 1);
    // A reply to another message in the topic: Telegram does not send the topic's name then.
    await alice.say('@TestNameBot and now?', {
      is_topic_message: true,
      message_thread_id: 10,
      reply_to_message: { message_id: 11, date: 0, chat: created.chat, from: created.from, text: 'prices?' },
    });
    await alice.say('@TestNameBot unnamed topic', { is_topic_message: true, message_thread_id: 20 });
    await alice.say('@TestNameBot in General');
    await bot.tg.waitForBotMessages(GROUP, 4);
    const ada = bot.tg.user({ userId: 111, firstName: 'Ada' });
    await ada.say('hello');
    await bot.tg.waitForBotMessages(111, 1);
    await bot.app.parts.sessions.flush();

    const book = JSON.parse(await readFile(`${bot.workspace}/sessions.names.json`, 'utf8')).chats;
    assert.deepEqual(book, {
      'telegram:-1003': { kind: 'group', name: 'Beekeepers' },
      'telegram:-1003:10': { kind: 'topic', name: 'Honey sales', parent: 'telegram:-1003' },
      'telegram:-1003:20': { kind: 'topic', parent: 'telegram:-1003' },
      'telegram:111': { kind: 'private', name: 'Ada' },
    });
  } finally {
    await bot.close();
  }
});
