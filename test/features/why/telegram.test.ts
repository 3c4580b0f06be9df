/**
 * `/why` on Telegram (real telegraf against the Bot API emulator, real daemon, fake LLM): sent as
 * a reply to one of the bot's answers it explains that answer, with an inline keyboard; pressing
 * "forget" (a callback query) forgets the fact everywhere, as /forget would.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramBot } from '../../helpers/telegram.js';
import { lastUserText, memoryAwareResponder, promptKind, text, toolCalls, toolResults } from '../../helpers/fake-llm.js';
import { waitFor } from '../../helpers/wait.js';

const OWNER = 111;

test('a reply of /why to an answer lists what it used with buttons; pressing "forget" removes the fact', async () => {
  const bot = await startTelegramBot({
    env: { TELEGRAM_ALLOWED_USERS: String(OWNER) },
    responder: (req, i) => {
      if (promptKind(req) !== 'chat') return memoryAwareResponder(req, i);
      if (toolResults(req).length > 0) return text(toolResults(req)[0]!.name === 'remember_fact' ? 'Saved.' : 'She lives in Porto.');
      const said = lastUserText(req);
      if (said.startsWith('please remember')) return toolCalls([{ name: 'remember_fact', args: { fact: 'Marta lives in Porto' } }]);
      if (said.startsWith('where')) return toolCalls([{ name: 'search_memory', args: { query: 'Marta' } }]);
      return text('ok');
    },
  });
  const facts = () =>
    bot.app.parts.index
      .browse!.facts(bot.app.parts.memory.scopeKey('telegram', String(OWNER)), 100)
      .filter((f) => f.retired === null)
      .map((f) => f.content);
  try {
    const owner = bot.tg.user({ userId: OWNER });
    await owner.say('please remember where my sister lives');
    await bot.tg.waitForBotMessages(OWNER, 1);
    await owner.say('where does Marta live?');
    const [, answer] = await bot.tg.waitForBotMessages(OWNER, 2);
    assert.equal(answer!.text, 'She lives in Porto.');
    await owner.say('and her brother?');
    await bot.tg.waitForBotMessages(OWNER, 3);

    const me = bot.channel.me!;
    await owner.say('/why', { reply_to_message: { message_id: answer!.messageId, from: { id: me.id, is_bot: true, first_name: 'Bot' }, text: answer!.text } });
    const why = (await bot.tg.waitForBotMessages(OWNER, 4))[3]!;
    assert.match(why.text, /search_memory → fact_[0-9a-f]+: Marta lives in Porto/, 'the answer replied to, not the last one');
    const keyboard: Array<Array<{ text: string; callback_data: string }>> = why.raw.reply_markup?.inline_keyboard ?? [];
    const forget = keyboard.flat().find((b) => b.text === '🗑 Forget 1');
    assert.match(forget?.callback_data ?? '', /^\/why forget [0-9a-f]{8} 1$/);
    assert.ok(
      keyboard.flat().some((b) => b.text === '✏️ Correct 1'),
      'a fact can be corrected',
    );

    assert.deepEqual(facts(), ['Marta lives in Porto']);
    await owner.press(forget!.callback_data, why.messageId);
    const done = (await bot.tg.waitForBotMessages(OWNER, 5))[4]!;
    assert.match(done.text, /Forgot “Marta lives in Porto”/);
    await waitFor(() => facts().length === 0, 5000, 'the fact forgotten');
    assert.equal(bot.tg.callsOf('answerCallbackQuery').length, 1, 'the press is answered (its spinner stops)');
  } finally {
    await bot.close();
  }
});
