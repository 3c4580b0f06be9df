/**
 * Webhook mode (TELEGRAM_WEBHOOK_URL set): setWebhook with the secret at start, updates
 * posted to our server are answered at once, the secret is checked, re-posts are dropped.
 * Updates are posted here the way Telegram posts them; replies go through the emulator.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, startTelegramBot } from '../../helpers/telegram.js';
import { lastUserText } from '../../helpers/fake-llm.js';

const OWNER = 111;
const SECRET = 'hook-secret_123';

function update(id: number, text: string) {
  return {
    update_id: id,
    message: {
      message_id: id,
      date: Math.floor(Date.now() / 1000),
      chat: { id: OWNER, type: 'private' },
      from: { id: OWNER, is_bot: false, first_name: 'Owner' },
      text,
    },
  };
}

test('webhook mode: the secret is checked, an update is answered, a re-post is processed once', async () => {
  const port = await freePort();
  const bot = await startTelegramBot({
    env: {
      TELEGRAM_ALLOWED_USERS: String(OWNER),
      TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${port}/tg/hook`,
      TELEGRAM_WEBHOOK_SECRET: SECRET,
      TELEGRAM_WEBHOOK_PORT: String(port),
    },
  });
  const url = `http://127.0.0.1:${port}/tg/hook`;
  const post = (body: unknown, secret?: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(secret ? { 'x-telegram-bot-api-secret-token': secret } : {}) },
      body: JSON.stringify(body),
    });
  try {
    const set = bot.tg.callsOf('setWebhook')[0]!.body;
    assert.equal(set.url, url);
    assert.equal(set.secret_token, SECRET);
    assert.deepEqual(set.allowed_updates, ['message', 'my_chat_member', 'callback_query']);
    assert.equal(bot.tg.callsOf('getUpdates').length, 0, 'no polling in webhook mode');

    assert.equal((await post(update(500, 'forged'))).status, 401);
    assert.equal((await post(update(501, 'forged too'), 'wrong-secret')).status, 401);
    assert.equal((await fetch(url)).status, 404, 'only POST');

    assert.equal((await post(update(502, 'real one'), SECRET)).status, 200);
    assert.equal((await post(update(502, 'real one'), SECRET)).status, 200, 'a re-post is acknowledged…');
    const [reply] = await bot.tg.waitForBotMessages(OWNER, 1);
    assert.equal(reply!.text, 'echo: real one');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(bot.tg.botMessages(OWNER).length, 1, '…and not processed again');
    assert.deepEqual(bot.llm.chatRequests().map(lastUserText), ['real one'], 'forged updates never reached the model');
  } finally {
    await bot.close();
  }
});

test('risk: unauthenticated webhook POSTs flood the log — the refusal warning is rate-limited', async () => {
  const port = await freePort();
  const bot = await startTelegramBot({
    env: {
      TELEGRAM_ALLOWED_USERS: String(OWNER),
      TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${port}/tg/hook`,
      TELEGRAM_WEBHOOK_SECRET: SECRET,
      TELEGRAM_WEBHOOK_PORT: String(port),
    },
  });
  const url = `http://127.0.0.1:${port}/tg/hook`;
  try {
    const before = bot.logs.text().length;
    for (let i = 0; i < 300; i++) {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(update(900 + i, 'forged')) });
      assert.equal(res.status, 401);
    }
    const lines = bot.logs
      .text()
      .slice(before)
      .split('\n')
      .filter((l) => l.includes('secret token'));
    assert.ok(lines.length >= 1, 'the first refusal is logged');
    assert.ok(lines.length <= 2, `${lines.length} log lines for 300 refused calls`);
  } finally {
    await bot.close();
  }
});
