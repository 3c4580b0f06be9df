/**
 * Messages sent on behalf of a chat (issue 33, item 13), through the real daemon, telegraf and
 * the Bot API emulator. Telegram marks them with `sender_chat` and a stand-in `from` that is a
 * bot account shared by everyone:
 * - an anonymous group admin (the group posting as itself): talks with the bot like a member,
 *   and with GROUP_ADMINS_MANAGE=on may manage — only an admin can post as the group;
 * - a member posting as a channel: a member, never looked up;
 * - a linked channel's post forwarded automatically into its discussion group: not someone
 *   talking to the bot (ignored, so never an admin).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramBot, type EmuUser, type TelegramTestBot } from '../../helpers/telegram.js';

const GROUP = -100123;
const OWNER = 111;
const MEMBER = 301;
const CHANNEL = -100777;
/** Telegram's stand-in senders: GroupAnonymousBot, Channel_Bot, and "Telegram" for automatic forwards. */
const ANONYMOUS_BOT = 1087968824;
const CHANNEL_BOT = 136817688;
const TELEGRAM_SERVICE = 777000;

async function groupBot(env: Record<string, string> = {}): Promise<TelegramTestBot> {
  return startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), TELEGRAM_ALLOWED_GROUPS: String(GROUP), ...env } });
}

interface Senders {
  /** The group posting as itself: one of its anonymous admins. */
  anonymous: (text: string) => Promise<void>;
  /** A member posting as their channel. */
  asChannel: (text: string) => Promise<void>;
  /** The linked channel's post, forwarded by Telegram into the group. */
  autoForward: (text: string) => Promise<void>;
  member: EmuUser;
}

function senders(bot: TelegramTestBot): Senders {
  const inGroup = (userId: number, firstName: string, userName: string) =>
    bot.tg.user({ userId, chatId: GROUP, type: 'supergroup', chatTitle: 'Plums', firstName, userName });
  const anonymous = inGroup(ANONYMOUS_BOT, 'Group', 'GroupAnonymousBot');
  const channelBot = inGroup(CHANNEL_BOT, 'Channel', 'Channel_Bot');
  const service = inGroup(TELEGRAM_SERVICE, 'Telegram', 'telegram');
  const channel = { id: CHANNEL, type: 'channel', title: 'Plum News', username: 'plumnews' };
  return {
    anonymous: (text) => anonymous.say(text, { from: { is_bot: true }, sender_chat: { id: GROUP, type: 'supergroup', title: 'Plums' } }),
    asChannel: (text) => channelBot.say(text, { from: { is_bot: true }, sender_chat: channel }),
    autoForward: (text) =>
      service.say(text, { sender_chat: channel, is_automatic_forward: true, forward_origin: { type: 'channel', chat: channel, message_id: 7, date: 1 } }),
    member: inGroup(MEMBER, 'Max', 'max'),
  };
}

/** Sends as `send` in the group; the bot's next message there. */
async function ask(bot: TelegramTestBot, send: () => Promise<void>): Promise<string> {
  const n = bot.tg.botMessages(GROUP).length;
  await send();
  return (await bot.tg.waitForBotMessages(GROUP, n + 1))[n]!.text;
}

test('risk: an anonymous group admin is ignored — with GROUP_ADMINS_MANAGE=on they talk and manage (no lookup); a member posting as a channel is a member; a linked channel post is never answered', async () => {
  const bot = await groupBot({ GROUP_ADMINS_MANAGE: 'on' });
  const s = senders(bot);
  try {
    assert.equal(await ask(bot, () => s.anonymous('@TestNameBot the plum code is 4471')), 'echo: the plum code is 4471');
    assert.match(await ask(bot, () => s.anonymous('/export')), /^📦 Sent: memory-export-/);
    assert.match(await ask(bot, () => s.anonymous('/status full')), new RegExp(`^Session: telegram:${GROUP} `, 'm'), 'the full /status');
    assert.equal(bot.tg.callsOf('sendDocument').length, 1);
    assert.equal(bot.tg.callsOf('getChatMember').length, 0, 'posting as the group proves the admin: nobody is looked up');
    const saved = (await bot.sessionFile(GROUP)).messages.find((m: any) => m.role === 'user');
    assert.equal(saved.senderName, 'Anonymous admin');

    // Someone posting as their channel is a member, whatever the channel: refused, and not looked up.
    assert.equal(
      await ask(bot, () => s.asChannel('/export')),
      "Only the bot's owner or a group admin can use /export in this group, so nothing was done. Ask one of them if it is needed.",
    );
    assert.equal(await ask(bot, () => s.asChannel('@TestNameBot hi from the channel')), 'echo: hi from the channel');
    assert.equal(bot.tg.callsOf('getChatMember').length, 0);

    // The linked channel's post that mentions the bot is the channel's broadcast: no answer, no command run.
    const llmCalls = bot.llm.requests.length;
    const before = bot.tg.botMessages(GROUP).length;
    await s.autoForward('/new@TestNameBot');
    await s.autoForward('Ask @TestNameBot about plums!');
    // Updates are routed in order: once the member's later message is answered, those two were passed over.
    assert.equal(await ask(bot, () => s.member.say('@TestNameBot ping')), 'echo: ping');
    assert.equal(bot.tg.botMessages(GROUP).length, before + 1, 'only the member was answered');
    assert.equal(bot.llm.requests.length, llmCalls + 1);
    assert.ok(
      (await bot.sessionFile(GROUP)).messages.some((m: any) => m.content === 'the plum code is 4471'),
      '/new did not run: the conversation is still there',
    );
  } finally {
    await bot.close();
  }
});

test('GROUP_ADMINS_MANAGE=off: an anonymous group admin talks with the bot like a member, and is refused the managing commands', async () => {
  const bot = await groupBot();
  const s = senders(bot);
  try {
    assert.equal(await ask(bot, () => s.anonymous('@TestNameBot hello')), 'echo: hello');
    assert.equal(
      await ask(bot, () => s.anonymous('/export')),
      "Only the bot's owner can use /export in this group, so nothing was done. Ask them if it is needed.",
    );
    assert.match(await ask(bot, () => s.anonymous('/status')), /^📊 Status/, 'the short /status');
    assert.equal(bot.tg.callsOf('sendDocument').length, 0);
  } finally {
    await bot.close();
  }
});
