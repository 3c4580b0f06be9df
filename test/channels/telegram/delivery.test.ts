/**
 * Reply delivery when Telegram misbehaves, through the real telegraf client: the test proxy in
 * front of the emulator answers some calls the way Telegram sometimes does. What a user would
 * notice is checked: which messages arrive, how many times, in what form.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramBot } from '../../helpers/telegram.js';
import { lastUserText, text } from '../../helpers/fake-llm.js';
import { waitFor } from '../../helpers/wait.js';

const OWNER = 111;
const env = { TELEGRAM_ALLOWED_USERS: String(OWNER) };

test("formatting rejected by Telegram (400 can't parse entities) → the same part is re-sent as plain text", async () => {
  const answer = 'Use **bold** and `x < y` here.';
  const bot = await startTelegramBot({ env, responder: () => text(answer) });
  try {
    bot.tg.intercept('sendMessage', (call) =>
      call.body.parse_mode === 'HTML'
        ? { status: 400, json: { ok: false, error_code: 400, description: 'Bad Request: can\'t parse entities: Unsupported start tag "y" at byte offset 20' } }
        : undefined,
    );
    await bot.tg.user({ userId: OWNER }).say('format something');
    const [msg] = await bot.tg.waitForBotMessages(OWNER, 1);
    assert.equal(msg!.text, answer, 'the plain Markdown text arrived');
    assert.equal(msg!.parseMode, undefined);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(bot.tg.botMessages(OWNER).length, 1, 'once');
    assert.deepEqual(
      bot.tg.callsOf('sendMessage').map((c) => c.body.parse_mode ?? 'plain'),
      ['HTML', 'plain'],
    );
    assert.ok(bot.logs.lines().some((l) => /rejected the formatting/.test(l.msg)));
  } finally {
    await bot.close();
  }
});

test('a 429 with retry_after is waited out, then the message is delivered once', async () => {
  const bot = await startTelegramBot({ env });
  try {
    bot.tg.intercept('sendMessage', (call) =>
      call.index === 0
        ? { status: 429, json: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 1', parameters: { retry_after: 1 } } }
        : undefined,
    );
    await bot.tg.user({ userId: OWNER }).say('hurry');
    const [msg] = await bot.tg.waitForBotMessages(OWNER, 1);
    assert.equal(msg!.text, 'echo: hurry');
    const [refused, accepted] = bot.tg.callsOf('sendMessage');
    assert.ok(accepted!.at - refused!.at >= 950, `waited ${accepted!.at - refused!.at} ms of the 1000 asked`);
    assert.equal(bot.tg.callsOf('sendMessage').length, 2);
    assert.equal(bot.tg.botMessages(OWNER).length, 1);
  } finally {
    await bot.close();
  }
});

test('a 5xx answer (not delivered) is retried with backoff; the message arrives exactly once', async () => {
  const bot = await startTelegramBot({ env });
  try {
    bot.tg.intercept('sendMessage', (call) => (call.index < 2 ? { status: 502, json: { ok: false, error_code: 502, description: 'Bad Gateway' } } : undefined));
    await bot.tg.user({ userId: OWNER }).say('flaky');
    const [msg] = await bot.tg.waitForBotMessages(OWNER, 1);
    assert.equal(msg!.text, 'echo: flaky');
    assert.equal(bot.tg.callsOf('sendMessage').length, 3);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(bot.tg.botMessages(OWNER).length, 1);
  } finally {
    await bot.close();
  }
});

test('exactly once: a send that timed out or lost its answer after Telegram delivered it is not sent again', async () => {
  const paras = Array.from({ length: 4 }, (_, i) => `Chunk ${i}: ${'word '.repeat(700).trim()}`);
  const long = paras.join('\n\n');
  const bot = await startTelegramBot({
    env,
    tuning: { sendTimeoutMs: 1500 },
    responder: (req) => (lastUserText(req) === 'long' ? text(long) : text(`echo: ${lastUserText(req)}`)),
  });
  try {
    // Chunk 1: a 502 (not delivered) → retried. Chunk 2: delivered, but the answer never comes
    // back (the bot times out). Chunk 3: delivered, then the connection is cut.
    bot.tg.intercept('sendMessage', (call) => {
      if (call.index === 0) return { status: 502, json: { ok: false, error_code: 502, description: 'Bad Gateway' } };
      if (call.index === 2) return { forward: true, hang: true };
      if (call.index === 3) return { forward: true, destroy: true };
      return undefined;
    });
    await bot.tg.user({ userId: OWNER }).say('long');
    const msgs = await bot.tg.waitForBotMessages(OWNER, 4);
    assert.deepEqual(
      msgs.map((m) => m.text.slice(0, 8)),
      ['Chunk 0:', 'Chunk 1:', 'Chunk 2:', 'Chunk 3:'],
      'every chunk once, in order',
    );
    await bot.tg.user({ userId: OWNER }).say('still ok?');
    const after = await bot.tg.waitForBotMessages(OWNER, 5);
    assert.equal(after[4]!.text, 'echo: still ok?');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(bot.tg.botMessages(OWNER).length, 5, 'no duplicates, also not later');
    assert.equal(bot.tg.callsOf('sendMessage').length, 6, 'only the 502 was retried');
    const uncertain = bot.logs.lines().filter((l) => l.code === 'telegram.delivery_uncertain');
    assert.equal(uncertain.length, 2);
  } finally {
    await bot.close();
  }
});

test('a send that fails for good (403: the user blocked the bot) is not retried and is logged', async () => {
  const bot = await startTelegramBot({ env });
  try {
    bot.tg.intercept('sendMessage', () => ({ status: 403, json: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' } }));
    await bot.tg.user({ userId: OWNER }).say('hello');
    await waitFor(
      () => bot.logs.lines().some((l) => /could not be handled|system failed|failed/i.test(String(l.msg)) && l.level >= 50),
      5000,
      'an error log line',
    );
    // The reply and then the apology: each tried once, neither retried.
    assert.ok(bot.tg.callsOf('sendMessage').length <= 2, `${bot.tg.callsOf('sendMessage').length} attempts`);
    assert.equal(bot.tg.botMessages(OWNER).length, 0);
  } finally {
    await bot.close();
  }
});
