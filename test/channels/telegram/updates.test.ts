/**
 * Inbound reliability: each update processed at most once (also across a restart), per-chat
 * order, and polling that silently stops being restarted by the watchdog.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramBot, type TelegramTestBot } from '../../helpers/telegram.js';
import { lastUserText, text } from '../../helpers/fake-llm.js';
import { waitFor } from '../../helpers/wait.js';

const OWNER = 111;

test('a duplicated update (sent again because the offset was never confirmed) is processed once', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) } });
  try {
    // Every update the emulator hands out is handed out again in the next two polls.
    const seen: any[] = [];
    bot.tg.intercept('getUpdates', () => ({
      transform: (json) => {
        // An error answer (the emulator busy under load, a poll cut short) has no result to repeat.
        if (!Array.isArray(json?.result)) return json;
        const repeat = [...seen];
        seen.push(...json.result);
        return { ...json, result: [...repeat.slice(-2), ...json.result, ...json.result] };
      },
    }));
    await bot.tg.user({ userId: OWNER }).say('only once please');
    await bot.tg.waitForBotMessages(OWNER, 1);
    await waitFor(() => bot.tg.callsOf('getUpdates').length > 8, 5000, 'the repeats to be polled');
    assert.equal(bot.tg.botMessages(OWNER).length, 1);
    assert.deepEqual(bot.llm.chatRequests().map(lastUserText), ['only once please']);
    assert.ok(bot.logs.lines().some((l) => /already processed/.test(l.msg)));
  } finally {
    await bot.close();
  }
});

test('after a restart, an update processed before it is not processed again; new ones are', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) } });
  try {
    const first: any[] = [];
    bot.tg.intercept('getUpdates', () => ({ transform: (json) => (first.push(...(json?.result ?? [])), json) }));
    await bot.tg.user({ userId: OWNER }).say('before the restart');
    await bot.tg.waitForBotMessages(OWNER, 1);
    bot.tg.clearIntercepts();

    // The new process gets the old update again first (Telegram never saw it confirmed).
    bot.tg.intercept('getUpdates', (call) =>
      call.index < 60 ? { transform: (json) => ({ ...json, result: [...first, ...(json?.result ?? [])] }) } : undefined,
    );
    await bot.restartChannel();
    await bot.tg.user({ userId: OWNER }).say('after the restart');
    const msgs = await bot.tg.waitForBotMessages(OWNER, 2);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(
      bot.tg.botMessages(OWNER).map((m) => m.text),
      ['echo: before the restart', 'echo: after the restart'],
    );
    assert.equal(msgs.length, 2);
    assert.deepEqual(bot.llm.chatRequests().map(lastUserText), ['before the restart', 'after the restart']);
  } finally {
    await bot.close();
  }
});

test('two chats interleaved: each chat gets its answers in its own order', async () => {
  // Slow first answers: if one chat's messages ran side by side, its replies would overtake.
  const delays: Record<string, number> = { a2: 10, a3: 200, b2: 10, b3: 100 };
  const bot: TelegramTestBot = await startTelegramBot({
    env: { TELEGRAM_ALLOWED_USERS: '201,202' },
    responder: async (req) => {
      const t = lastUserText(req);
      // a1's answer waits for b1's to reach the chat: only chats served side by side get there
      // (one queue for both would hold b1 behind a1 until this wait gives up). A wait on the event,
      // not a head start in ms, which a busy machine can eat.
      if (t === 'a1') await waitFor(() => bot.tg.botMessages(202).length > 0, 5_000, "chat B's first answer").catch(() => {});
      await new Promise((r) => setTimeout(r, delays[t] ?? 0));
      return text(`re ${t}`);
    },
  });
  try {
    const a = bot.tg.user({ userId: 201 });
    const b = bot.tg.user({ userId: 202 });
    for (const [user, t] of [
      [a, 'a1'],
      [b, 'b1'],
      [a, 'a2'],
      [b, 'b2'],
      [a, 'a3'],
      [b, 'b3'],
    ] as const)
      await user.say(t);
    const ra = await bot.tg.waitForBotMessages(201, 3);
    const rb = await bot.tg.waitForBotMessages(202, 3);
    assert.deepEqual(
      ra.map((m) => m.text),
      ['re a1', 're a2', 're a3'],
    );
    assert.deepEqual(
      rb.map((m) => m.text),
      ['re b1', 're b2', 're b3'],
    );
    // The chats did run side by side: chat B's first answer came before chat A's.
    const all = bot.tg.botMessages().map((m) => m.text);
    assert.ok(all.indexOf('re b1') < all.indexOf('re a1'), all.join(', '));
  } finally {
    await bot.close();
  }
});

test('the watchdog restarts polling that silently stopped returning', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) }, tuning: { stallAfterMs: 800, watchdogIntervalMs: 100 } });
  try {
    // The 4th poll never comes back (a half-open connection): without a watchdog, silence for ever.
    bot.tg.intercept('getUpdates', (call) => (call.index === 3 ? { hang: true } : undefined));
    await waitFor(() => bot.tg.callsOf('getUpdates').length >= 4, 5000, 'the stuck poll');
    await bot.tg.user({ userId: OWNER }).say('anyone there?');
    const [reply] = await bot.tg.waitForBotMessages(OWNER, 1, 10_000);
    assert.equal(reply!.text, 'echo: anyone there?');
    assert.ok(bot.channel.pollingRestarts >= 1);
    assert.ok(bot.logs.lines().some((l) => /polling stopped returning/.test(l.msg)));
  } finally {
    await bot.close();
  }
});

test('polling survives a 429 on getUpdates and a Bot API that is briefly down', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) } });
  try {
    bot.tg.intercept('getUpdates', (call) => {
      if (call.index === 2)
        return { status: 429, json: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 1', parameters: { retry_after: 1 } } };
      if (call.index === 3 || call.index === 4) return { status: 502, json: { ok: false, error_code: 502, description: 'Bad Gateway' } };
      return undefined;
    });
    await waitFor(() => bot.tg.callsOf('getUpdates').length >= 6, 8000, 'polling to go on');
    const polls = bot.tg.callsOf('getUpdates');
    assert.ok(polls[3]!.at - polls[2]!.at >= 950, 'retry_after honoured');
    await bot.tg.user({ userId: OWNER }).say('hi');
    assert.equal((await bot.tg.waitForBotMessages(OWNER, 1))[0]!.text, 'echo: hi');
  } finally {
    await bot.close();
  }
});
