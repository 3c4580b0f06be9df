/**
 * The command router (src/dispatch/router.ts) and the grammar it reads (src/core/command-line.ts): `/name args` and `/name@botname args` (how
 * Telegram writes a command picked from the menu in a group) reach the command, never the model.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CommandRouter } from '../../src/dispatch/router.js';
import { parseCommand } from '../../src/core/command-line.js';
import type { Command } from '../../src/turn/command.js';
import { startTestBot } from '../helpers/app.js';

test('parseCommand reads /name, /name@bot (the bot it names, for the channel to judge), arguments over several lines, any case', () => {
  assert.deepEqual(parseCommand('/status'), { name: 'status', args: '' });
  assert.deepEqual(parseCommand('/status@membot_bot'), { name: 'status', args: '', bot: 'membot_bot' });
  assert.deepEqual(parseCommand('  /Forget@MemBot   my old address  '), { name: 'forget', args: 'my old address', bot: 'MemBot' });
  assert.deepEqual(parseCommand('/remind in 5 min\ncall Ana'), { name: 'remind', args: 'in 5 min\ncall Ana' });
});

test('parseCommand leaves text that is not a command to the model', () => {
  for (const t of ['status', 'hello /status', '/', '/ status', '/status@', '/sta-tus', `/${'x'.repeat(33)}`, '/status@bot-name']) {
    assert.equal(parseCommand(t), null, JSON.stringify(t));
  }
});

test('the router finds a command by its name', () => {
  const help = { name: 'help' } as Command;
  const router = new CommandRouter([help]);
  assert.equal(router.find('help'), help);
  assert.equal(router.find('nope'), undefined);
  assert.deepEqual(router.list(), [help]);
});

test('in the daemon, /help@botname is answered by the command and nothing reaches the model', async () => {
  const bot = await startTestBot();
  try {
    const [plain] = await bot.send('1', '/help');
    const [addressed] = await bot.send('1', '/help@membot_bot');
    assert.ok(plain?.includes('/status'), plain);
    assert.equal(addressed, plain);
    assert.equal(bot.llm.chatRequests().length, 0);
  } finally {
    await bot.close();
  }
});
