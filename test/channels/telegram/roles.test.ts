/**
 * Roles in groups (issue 25, item 1), through the real daemon, telegraf and the Bot API
 * stand-in: in an allowed group the commands that reveal or destroy the group's shared memory
 * (/export, /forget, /memory, /memory undo, /new, /compact, /reminders cancel, the full /status)
 * are for the bot's owners (TELEGRAM_ALLOWED_USERS) and, with GROUP_ADMINS_MANAGE=on, the
 * group's Telegram admins (getChatMember, cached). A member gets one polite line and nothing
 * changes — no file, no LLM call, no document — and /status is the short one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { startTelegramBot, type EmuUser, type TelegramTestBot } from '../../helpers/telegram.js';
import { waitFor } from '../../helpers/wait.js';

const GROUP = -100123;
const OWNER = 111;
const MEMBER = 301;
const ADMIN = 302;

async function groupBot(env: Record<string, string> = {}): Promise<TelegramTestBot> {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), TELEGRAM_ALLOWED_GROUPS: String(GROUP), ...env } });
  bot.tg.setChatMember(GROUP, ADMIN, 'administrator');
  return bot;
}

function people(bot: TelegramTestBot): Record<'owner' | 'member' | 'admin', EmuUser> {
  const inGroup = (userId: number, firstName: string) => bot.tg.user({ userId, chatId: GROUP, type: 'supergroup', chatTitle: 'Plums', firstName });
  return { owner: inGroup(OWNER, 'Olga'), member: inGroup(MEMBER, 'Max'), admin: inGroup(ADMIN, 'Ada') };
}

/** Sends `text` as `who` in the group; the bot's next message there. */
async function ask(bot: TelegramTestBot, who: EmuUser, text: string): Promise<string> {
  const n = bot.tg.botMessages(GROUP).length;
  await who.say(text);
  return (await bot.tg.waitForBotMessages(GROUP, n + 1))[n]!.text;
}

/** Every file under the parts of the workspace a command could change, with its bytes. */
async function disk(ws: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const top of ['sessions', 'memory', 'exports', 'sessions.wal.jsonl']) {
    const p = path.join(ws, top);
    const entries = await readdir(p, { withFileTypes: true, recursive: true }).catch(() => null);
    if (entries === null) {
      const bytes = await readFile(p).catch(() => null);
      if (bytes) out.set(top, bytes.toString('base64'));
      continue;
    }
    for (const e of entries) {
      if (!e.isFile()) continue;
      const file = path.join(e.parentPath ?? (e as any).path, e.name);
      out.set(path.relative(ws, file), (await readFile(file)).toString('base64'));
    }
  }
  return out;
}

test('a group member is refused /export, /forget, /memory, /memory undo, /new, /compact, /reminders cancel with one line, nothing changes; /status is the short one; the owner may', async () => {
  const bot = await groupBot();
  const { owner, member, admin } = people(bot);
  const { parts: services } = bot.app;
  try {
    // The group has a conversation, a memory with two versions (so there is something to undo) and a reminder.
    assert.equal(await ask(bot, owner, '@TestNameBot the plum code is 4471'), 'echo: the plum code is 4471');
    const files = services.memory.forChat('telegram', String(GROUP));
    await files.writeMemory('- The plum code is 4471.\n');
    await files.writeMemory('- The plum code is 4471.\n- Max waters the plums.\n');
    assert.ok(
      (await services.reminders.schedule('telegram', String(GROUP), { at: new Date(Date.now() + 86_400_000).toISOString(), text: 'water the plums' })).ok,
    );
    // The owner's pending /forget request: a member must not be able to confirm it.
    assert.match(await ask(bot, owner, '/forget plum code'), /^Found “plum code” in: /);
    await services.sessions.flush();
    const before = await disk(bot.workspace);
    const llmCalls = bot.llm.requests.length;

    const refused = ['/export', '/forget confirm', '/forget plum', '/new', '/compact', '/memory', '/memory undo', '/memory history', '/reminders cancel 1'];
    for (const command of refused) {
      // The line names the command, and the subcommand where only that one is closed to members.
      const label = command.startsWith('/reminders') ? '/reminders cancel' : command.split(' ')[0];
      assert.equal(
        await ask(bot, member, command),
        `Only the bot's owner can use ${label} in this group, so nothing was done. Ask them if it is needed.`,
        command,
      );
    }
    // Without GROUP_ADMINS_MANAGE an admin is a member like any other (and nobody is looked up).
    assert.match(await ask(bot, admin, '/export'), /^Only the bot's owner can use \/export in this group/);
    assert.equal(bot.tg.callsOf('getChatMember').length, 0, 'GROUP_ADMINS_MANAGE is off: no lookup');

    const status = await ask(bot, member, '/status');
    assert.match(status, /^📊 Status/);
    assert.match(status, /^Model: /m);
    assert.match(status, /^Memory: on/m);
    assert.match(status, /^Messages: 2 in this conversation/m);
    assert.match(status, /^Tokens today: 15 \(no daily budget\)$/m);
    assert.doesNotMatch(status, /Session:|Context:|Tokenizer|Uptime|Last turn|refused|Tokens by role/, 'no operator internals');
    // Reading the reminders (they will be posted in the group anyway) and /help stay open.
    assert.match(await ask(bot, member, '/reminders'), /^⏰ Pending reminders .*\n1\. .*water the plums/);
    assert.match(await ask(bot, member, '/help'), /\/status/);

    await services.sessions.flush();
    assert.deepEqual(await disk(bot.workspace), before, 'no file changed');
    assert.equal(bot.llm.requests.length, llmCalls, 'no LLM call');
    assert.equal(bot.tg.callsOf('sendDocument').length, 0, 'no document');
    assert.equal((await services.reminders.list('telegram', String(GROUP))).length, 1, 'the reminder is still there');
    assert.match(await readFile(path.join(bot.workspace, 'memory', `telegram:${GROUP}`, 'MEMORY.md'), 'utf8'), /Max waters the plums/);

    // The owner may: full /status, the document, the forget request it made, a new conversation.
    assert.match(await ask(bot, owner, '/status full'), new RegExp(`^Session: telegram:${GROUP} `, 'm'));
    assert.match(await ask(bot, owner, '/forget confirm'), /^🗑 Forgot “plum code”/);
    assert.match(await ask(bot, owner, '/export'), /^📦 Sent: memory-export-/);
    assert.equal(bot.tg.callsOf('sendDocument').length, 1);
    assert.equal(await ask(bot, owner, '/new'), 'Session cleared.');
  } finally {
    await bot.close();
  }
});

test('GROUP_ADMINS_MANAGE=on: a Telegram admin of the group may (looked up once, cached); a member may not; a failed lookup counts as member', async () => {
  const bot = await groupBot({ GROUP_ADMINS_MANAGE: 'on' });
  const { member, admin } = people(bot);
  try {
    assert.equal(
      await ask(bot, member, '/export'),
      "Only the bot's owner or a group admin can use /export in this group, so nothing was done. Ask one of them if it is needed.",
    );
    assert.match(await ask(bot, admin, '/export'), /^📦 Sent: memory-export-/);
    assert.match(await ask(bot, admin, '/status full'), new RegExp(`^Session: telegram:${GROUP} `, 'm'), 'an admin gets the full /status');
    const lookups = bot.tg.callsOf('getChatMember');
    assert.deepEqual(
      lookups.map((c) => [String(c.body.chat_id), String(c.body.user_id)]),
      [
        [String(GROUP), String(MEMBER)],
        [String(GROUP), String(ADMIN)],
      ],
      'one lookup per person: the second command of the admin is answered from the cache',
    );

    // Telegram refuses the lookup: the person is not a manager (fail closed), and it is logged.
    bot.tg.intercept('getChatMember', () => ({ status: 400, json: { ok: false, error_code: 400, description: 'Bad Request: member list is inaccessible' } }));
    const stranger = bot.tg.user({ userId: 303, chatId: GROUP, type: 'supergroup', chatTitle: 'Plums' });
    bot.tg.setChatMember(GROUP, 303, 'creator');
    assert.match(await ask(bot, stranger, '/new'), /^Only the bot's owner or a group admin can use \/new in this group/);
    await waitFor(
      () => bot.logs.lines().some((l) => l.code === 'telegram.rejected' && /getChatMember/.test(String(l.msg))),
      5000,
      'the failed lookup in the log',
    );
  } finally {
    await bot.close();
  }
});

test('in a private chat the user is the owner of their own chat: /export and the full /status work', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), TELEGRAM_DM_POLICY: 'open' } });
  try {
    const someone = bot.tg.user({ userId: 404 });
    await someone.say('/export');
    await waitFor(() => bot.tg.callsOf('sendDocument').length === 1 && bot.tg.botMessages(404).length >= 1, 10_000, 'the document and the reply');
    assert.match(bot.tg.botMessages(404)[0]!.text, /^📦 Sent: memory-export-/);
    await someone.say('/status full');
    assert.match((await bot.tg.waitForBotMessages(404, 2))[1]!.text, /^Session: telegram:404 /m);
  } finally {
    await bot.close();
  }
});
