/**
 * A group the bot does not serve yet (issue 33, item 16), through the real daemon, telegraf and
 * the Bot API emulator. Before: total silence, for the owner too, and the only way in was
 * TELEGRAM_ALLOWED_GROUPS and a restart. Now the owner is told once, there, how to turn the group
 * on, and `/allow` from them serves it at once (kept in the pairing file); strangers still get
 * nothing, and the model is never reached for an unserved group.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startTelegramBot, type EmuUser, type TelegramTestBot } from '../../helpers/telegram.js';
import { pairingFile } from '../../../src/channels/telegram/pairing-file.js';
import { runPair } from '../../../src/cli/pair.js';
import { waitFor } from '../../helpers/wait.js';

const GROUP = -100555;
const OWNER = 111;
const MEMBER = 301;
const NOTE = `This group isn't served yet, so I stay quiet here. You are my owner: send /allow here to let everyone in it talk to me (or add its id, ${GROUP}, to TELEGRAM_ALLOWED_GROUPS).`;
const APPROVED = `✅ This group is served now: anyone here can talk to me by mentioning me or replying to me. To undo it: npm run pair -- revoke ${GROUP}`;

function inGroup(bot: TelegramTestBot, userId: number, chatId = GROUP): EmuUser {
  return bot.tg.user({ userId, chatId, type: 'supergroup', chatTitle: 'Plums' });
}

/** Sends as `who` in the group; the bot's next message there. */
async function ask(bot: TelegramTestBot, who: EmuUser, text: string): Promise<string> {
  const n = bot.tg.botMessages(who.chatId).length;
  await who.say(text);
  return (await bot.tg.waitForBotMessages(who.chatId, n + 1))[n]!.text;
}

/** Waits until the channel has refused `n` messages in all (its log line), so a message that gets no reply has been dealt with. */
async function refusals(bot: TelegramTestBot, n: number): Promise<void> {
  const count = () => bot.logs.lines().filter((l) => l.msg === 'message refused').length;
  await waitFor(() => count() >= n, 10_000, `${n} refused message(s) (have ${count()})`);
}

async function approvedGroups(bot: TelegramTestBot): Promise<string[]> {
  const raw = await readFile(pairingFile(bot.workspace), 'utf8').catch(() => '{}');
  return ((JSON.parse(raw) as { groups?: Array<{ chatId: string }> }).groups ?? []).map((g) => g.chatId);
}

/** A `my_chat_member` update (the emulator cannot make one): handed to the bot with its next poll. */
function injectUpdate(bot: TelegramTestBot, update: Record<string, unknown>): void {
  let sent = false;
  bot.tg.intercept('getUpdates', () =>
    sent
      ? undefined
      : {
          forward: true,
          transform: (json: { result: unknown[] }) => {
            sent = true;
            return { ...json, result: [...json.result, update] };
          },
        },
  );
}

function botAdded(bot: TelegramTestBot, updateId: number, chatId: number, by: number): Record<string, unknown> {
  const me = { id: bot.channel.me!.id, is_bot: true, first_name: 'Test', username: bot.channel.me!.username };
  return {
    update_id: updateId,
    my_chat_member: {
      chat: { id: chatId, type: 'supergroup', title: `Group ${chatId}` },
      from: { id: by, is_bot: false, first_name: `User${by}` },
      date: Math.floor(Date.now() / 1000),
      old_chat_member: { user: me, status: 'left' },
      new_chat_member: { user: me, status: 'member' },
    },
  };
}

test('risk: a new group is silent — the owner mentioning the bot is told once how to turn it on; /allow from them serves it at once and after a restart; a member cannot; the model is never reached before', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) } });
  const owner = inGroup(bot, OWNER);
  const member = inGroup(bot, MEMBER);
  try {
    // A member: nothing, and /allow from them approves nothing.
    await member.say('@TestNameBot hello?');
    await member.say('/allow');
    await refusals(bot, 2);

    // The owner: told once, in reply to their message.
    assert.equal(await ask(bot, owner, '@TestNameBot are you there?'), NOTE);
    assert.equal(typeof bot.tg.botMessages(GROUP)[0]!.raw.reply_parameters?.message_id, 'number', 'a reply to the owner');
    await owner.say('@TestNameBot hello??');
    await member.say('/allow@TestNameBot');
    await refusals(bot, 5);
    assert.deepEqual(await approvedGroups(bot), [], 'a member cannot approve');
    assert.equal(bot.llm.requests.length, 0, 'the model is never reached for an unserved group');

    assert.equal(await ask(bot, owner, '/allow'), APPROVED);
    assert.deepEqual(await approvedGroups(bot), [String(GROUP)], 'kept in the pairing file');
    assert.equal(await ask(bot, member, '@TestNameBot hi'), 'echo: hi', 'served from the next message on, without a restart');
    assert.equal(await ask(bot, owner, '/allow'), 'This group is already served: anyone here can talk to me by mentioning me or replying to me.');

    // A restart waits for the side replies of the old channel: exactly these, the note once.
    await bot.restartChannel();
    assert.deepEqual(
      bot.tg.botMessages(GROUP).map((m) => m.text),
      [NOTE, APPROVED, 'echo: hi', 'This group is already served: anyone here can talk to me by mentioning me or replying to me.'],
    );
    assert.equal(await ask(bot, member, '@TestNameBot still there?'), 'echo: still there?', 'still served after a restart');

    // Taken back from the terminal (the running daemon sees it at the next message): quiet again, and the owner is told again.
    const out: string[] = [];
    assert.equal(await runPair(['revoke', String(GROUP)], bot.workspace, { out: (l) => out.push(l), err: (l) => out.push(l) }), 0);
    assert.match(out[0]!, new RegExp(`^Revoked group ${GROUP}`));
    const llmCalls = bot.llm.requests.length;
    await member.say('@TestNameBot and now?');
    assert.equal(await ask(bot, owner, '@TestNameBot and now?'), NOTE);
    assert.equal(bot.llm.requests.length, llmCalls, 'the member was not answered');
  } finally {
    await bot.close();
  }
});

test('the bot added to a group by its owner says once there how to turn it on; added by someone else it stays quiet', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) } });
  const other = -100666;
  try {
    injectUpdate(bot, botAdded(bot, 900_001, GROUP, OWNER));
    assert.equal((await bot.tg.waitForBotMessages(GROUP, 1))[0]!.text, NOTE);
    // Already told: mentioning the bot there adds nothing.
    await inGroup(bot, OWNER).say('@TestNameBot so?');
    await refusals(bot, 1);

    bot.tg.clearIntercepts();
    injectUpdate(bot, botAdded(bot, 900_002, other, MEMBER));
    await waitFor(
      () => bot.logs.lines().some((l) => String(l.msg).startsWith(`added to group ${other}, which is not served, by someone who is not an owner`)),
      10_000,
      'the log line',
    );
    await bot.restartChannel();
    assert.equal(bot.tg.botMessages(GROUP).length, 1, 'told once');
    assert.equal(bot.tg.botMessages(other).length, 0, 'nothing said where a stranger added the bot');
  } finally {
    await bot.close();
  }
});

test("MEMORY_SCOPE=global: /allow approves no group (the one memory is the owner's), and says why", async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), TELEGRAM_DM_POLICY: 'allowlist', MEMORY_SCOPE: 'global' } });
  const owner = inGroup(bot, OWNER);
  try {
    assert.match(await ask(bot, owner, '/allow'), /^I serve no group: I keep one memory, my owner's \(MEMORY_SCOPE=global\)/);
    assert.deepEqual(await approvedGroups(bot), []);
    await owner.say('@TestNameBot hi');
    await refusals(bot, 2);
    assert.equal(bot.llm.requests.length, 0);
  } finally {
    await bot.close();
  }
});
