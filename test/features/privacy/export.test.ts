/**
 * /export: one Markdown file with everything kept for the chat. Without a way to send files
 * (the test channel, the console) it is written under workspace/exports/ and the reply gives
 * the path; on Telegram it arrives as a document (sendDocument through the real telegraf).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot } from '../../helpers/app.js';
import { startTelegramBot, waitFor } from '../../helpers/telegram.js';
import { echoResponder, promptKind, text, type Responder } from '../../helpers/fake-llm.js';

const FACTS = '## About\n- The user is called Ada.\n- Ada keeps bees in Lisbon.\n';
const responder: Responder = (req, i) =>
  promptKind(req) === 'consolidation'
    ? text(JSON.stringify({ history_entry: '[2026-03-10 12:00] Ada talked about honey.', memory_update: FACTS, facts: ['Ada sells honey at the market.'] }))
    : echoResponder(req, i);

test("/export holds MEMORY.md, the facts with confidence, today's notes, history and the conversation", async () => {
  const bot = await startTestBot({
    responder,
    prepare: async (ws) => {
      await mkdir(path.join(ws, 'memory', 'test:1'), { recursive: true });
      await writeFile(path.join(ws, 'memory', 'test:1', 'MEMORY.md'), FACTS);
    },
  });
  try {
    await bot.send('1', 'I sell honey at the market');
    await bot.send('1', '/new');
    await bot.send('1', 'and candles too');
    await bot.send('2', 'a secret of chat two');
    const [reply] = await bot.send('1', '/export');
    const m = /^📦 Exported everything I keep about this chat to (\/\S+\.md)$/.exec(reply!);
    assert.ok(m, reply);
    assert.equal(path.dirname(m[1]!), path.join(bot.workspace, 'exports', 'test:1'));
    const md = await readFile(m[1]!, 'utf8');
    const today = new Date().toISOString().slice(0, 10);
    assert.match(md, /^# Memory export — test:1\n/);
    assert.match(md, /## Long-term memory \(MEMORY\.md\)\n\n#### About\n- The user is called Ada\.\n- Ada keeps bees in Lisbon\.\n/);
    assert.match(md, /## Facts\n\n- Ada sells honey at the market\. — confidence 1\.00, since \d{4}-\d\d-\d\d\n/);
    assert.match(md, new RegExp(`### ${today}\\n\\n\\[\\d\\d:\\d\\d\\] User: I sell honey at the market \\| Assistant: echo: I sell honey at the market\\n`));
    assert.match(md, /## History\n\n### \d{4}-.*\n\[2026-03-10 12:00\] Ada talked about honey\./);
    assert.match(md, /## Current conversation\n\n\*\*Tester\*\* \(.* UTC\): and candles too\n\n\*\*Assistant\*\* \(.* UTC\): echo: and candles too/);
    assert.doesNotMatch(md, /chat two/, 'nothing of another chat');
  } finally {
    await bot.close();
  }
});

test('/export on Telegram arrives as a Markdown document', async () => {
  const OWNER = 111;
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) } });
  // The emulator has no sendDocument: the proxy answers it as Telegram would.
  bot.tg.intercept('sendDocument', () => ({
    json: { ok: true, result: { message_id: 900, date: 0, chat: { id: OWNER, type: 'private' }, document: { file_id: 'f1', file_unique_id: 'u1' } } },
  }));
  try {
    await bot.tg.user({ userId: OWNER }).say('remember that I like plums');
    await bot.tg.waitForBotMessages(OWNER, 1);
    await bot.tg.user({ userId: OWNER }).say('/export');
    await waitFor(() => bot.tg.callsOf('sendDocument').length === 1 && bot.tg.botMessages(OWNER).length >= 2, 10_000, 'the document and the reply');
    const body = String(bot.tg.callsOf('sendDocument')[0]!.body);
    assert.match(body, /name="chat_id"\r\n\r\n111\r\n/);
    assert.match(body, /filename="memory-export-\d{8}-\d{4}\.md"/);
    assert.match(body, /# Memory export — telegram:111/);
    assert.match(body, /User: remember that I like plums \| Assistant: echo: remember that I like plums/);
    assert.match(bot.tg.botMessages(OWNER).at(-1)!.text, /^📦 Sent: memory-export-\d{8}-\d{4}\.md \([\d,]+ bytes\)/);
  } finally {
    await bot.close();
  }
});

test('/help lists /memory history and undo, /forget and /export', async () => {
  const bot = await startTestBot();
  try {
    const [help] = await bot.send('1', '/help');
    assert.match(help!, /^\/memory — .*\/memory history lists its versions, \/memory undo takes back the last change$/m);
    assert.match(help!, /^\/forget — Forget words everywhere in your memory: \/forget <words> shows what matches, \/forget confirm removes it$/m);
    assert.match(help!, /^\/export — Get everything I keep about this chat as one Markdown file$/m);
  } finally {
    await bot.close();
  }
});
