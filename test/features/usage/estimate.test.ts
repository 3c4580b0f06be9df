/**
 * Calls that end without the server's `usage` are still counted (issue 33, item 3): an answer
 * /stopped after its first words, one cut by TURN_TIMEOUT_MS, or one from a server that never
 * reports usage cost the prompt the server was sent and what it streamed. Before, usage.db got no
 * row at all, and stopping every answer dodged DAILY_TOKEN_BUDGET. Through the real daemon:
 * telegraf against the Bot API stand-in, the fake model streaming slowly, real usage.db.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startTelegramBot, type TelegramTestBot } from '../../helpers/telegram.js';
import { echoResponder, lastUserText, text, type RecordedRequest, type Responder } from '../../helpers/fake-llm.js';
import { tempDir } from '../../helpers/workspace.js';
import { memoryCli } from '../../helpers/child.js';
import { SqliteUsageStore } from '../../../src/features/usage/sqlite-usage.js';
import { waitFor } from '../../helpers/wait.js';

const USER = 111;
/** ~700 characters in 70 events `paceMs` apart, plain words. */
const LONG = Array.from({ length: 140 }, (_, i) => `w${i + 1}`).join(' ');
const slowFor =
  (asking: RegExp, paceMs: number): Responder =>
  (req, i) =>
    asking.test(lastUserText(req)) ? { ...text(LONG), stream: { chunkChars: 10, paceMs, usage: false } } : echoResponder(req, i);

/** The budget is small and the owner is held to it, so the second message shows whether the first was counted. */
const ENV = { TELEGRAM_ALLOWED_USERS: String(USER), DAILY_TOKEN_BUDGET: '300', DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS: 'false' };
const BUDGET_LINE = /^This chat has used its daily budget of 300 tokens \([\d,]+ today\), so your message was saved but not sent to the model\./;

/** Characters of what the request carried (messages and tool definitions), for a plausible range of tokens. */
function requestChars(req: RecordedRequest): number {
  return JSON.stringify(req.body.messages).length + JSON.stringify(req.body.tools ?? []).length;
}

/**
 * The chat's answer row of today: one call, an estimate, plausible for the request the fake model
 * saw and for the `streamed` characters of answer (tokens of "w1 w2 …": about one per 2 characters).
 */
async function assertEstimated(bot: TelegramTestBot, streamed: { min: number; max: number }): Promise<void> {
  const rows = await bot.app.parts.usage.rows({ chat: `telegram:${USER}` });
  assert.deepEqual(
    rows.map((r) => [r.kind, r.calls, r.estimatedCalls]),
    [['answer', 1, 1]],
    JSON.stringify(rows),
  );
  const row = rows[0]!;
  const chars = requestChars(bot.llm.chatRequests()[0]!);
  assert.ok(row.promptTokens > chars / 8 && row.promptTokens < chars / 2, `prompt ${row.promptTokens} tokens for a request of ${chars} characters`);
  const ok = row.completionTokens >= streamed.min / 4 && row.completionTokens > 0 && row.completionTokens <= streamed.max / 1.5;
  assert.ok(ok, `completion ${row.completionTokens} tokens for ${streamed.min}–${streamed.max} characters streamed`);
  assert.equal(row.estimatedTokens, row.promptTokens + row.completionTokens);
}

async function ask(bot: TelegramTestBot, words: string): Promise<string> {
  const n = bot.tg.botMessages(USER).length;
  await bot.tg.user({ userId: USER }).say(words);
  return (await bot.tg.waitForBotMessages(USER, n + 1, 15_000))[n]!.text;
}

test('an answer /stopped after its first words is counted (prompt + what streamed, marked an estimate), and DAILY_TOKEN_BUDGET sees it', async () => {
  const bot = await startTelegramBot({ env: ENV, responder: slowFor(/long story/, 50) });
  try {
    const user = bot.tg.user({ userId: USER });
    await user.say('tell me a long story');
    await waitFor(() => bot.tg.callsOf('sendMessageDraft').some((c) => c.body.text.length > 0), 10_000, 'the first words in a draft');
    await user.say('/stop');
    const msgs = await bot.tg.waitForBotMessages(USER, 2, 10_000);
    const stopped = msgs.find((m) => m.text.endsWith('… [stopped]'));
    assert.ok(stopped, JSON.stringify(msgs.map((m) => m.text)));
    assert.equal(bot.llm.streams[0]!.endedAt, undefined, 'the stream was cut, so the server sent no usage');
    await waitFor(async () => (await bot.app.parts.usage.rows({ chat: `telegram:${USER}` })).length > 0, 5_000, 'a usage row');
    // What the chat shows of it, and perhaps a few events more that arrived before the stop took.
    const partial = stopped.text.length - ' … [stopped]'.length;
    await assertEstimated(bot, { min: partial, max: partial + 100 });

    const before = bot.llm.chatRequests().length;
    assert.match(await ask(bot, 'and another one'), BUDGET_LINE);
    assert.equal(bot.llm.chatRequests().length, before, 'over the budget: the model is not asked');
  } finally {
    await bot.close();
  }
});

test('an answer cut by TURN_TIMEOUT_MS mid-stream is counted too, and the next message gets the budget line', async () => {
  // 70 events 100 ms apart: 7 s of stream, cut at 2 s.
  const bot = await startTelegramBot({ env: { ...ENV, TURN_TIMEOUT_MS: '2000' }, responder: slowFor(/long story/, 100) });
  try {
    assert.match(await ask(bot, 'tell me a long story'), /^Sorry, I could not answer within 2 seconds, so I stopped/);
    await waitFor(async () => (await bot.app.parts.usage.rows({ chat: `telegram:${USER}` })).length > 0, 5_000, 'a usage row');
    // Cut at 2 s of a 7 s stream: some of it, not all.
    await assertEstimated(bot, { min: 1, max: LONG.length * 0.6 });
    assert.match(await ask(bot, 'and another one'), BUDGET_LINE);
  } finally {
    await bot.close();
  }
});

test('a whole answer from a server that never reports usage is counted from its request and its text', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(USER) }, responder: slowFor(/long story/, 0) });
  try {
    assert.equal(await ask(bot, 'tell me a long story'), LONG);
    await waitFor(async () => (await bot.app.parts.usage.rows({ chat: `telegram:${USER}` })).length > 0, 5_000, 'a usage row');
    await assertEstimated(bot, { min: LONG.length, max: LONG.length });
  } finally {
    await bot.close();
  }
});

test('a usage.db from before estimates gains their columns at open (rows kept); the report says which tokens are estimates', async () => {
  const ws = await tempDir();
  try {
    const file = path.join(ws.dir, 'usage.db');
    const day = new Date().toISOString().slice(0, 10);
    const old = new Database(file);
    old.exec(`CREATE TABLE usage_daily (day TEXT NOT NULL, chat TEXT NOT NULL, kind TEXT NOT NULL, calls INTEGER NOT NULL DEFAULT 0,
      prompt_tokens INTEGER NOT NULL DEFAULT 0, cached_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
      audio_seconds REAL NOT NULL DEFAULT 0, PRIMARY KEY (day, chat, kind)) WITHOUT ROWID`);
    old.prepare("INSERT INTO usage_daily VALUES (?, 'telegram:42', 'answer', 2, 1000, 0, 100, 0)").run(day);
    old.close();
    // Read-only, as the report opens it, before any daemon migrated it.
    const before = await memoryCli(['usage'], { WORKSPACE_DIR: ws.dir });
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stdout, new RegExp(`^${day}\\s+2\\s+1,100\\s+0\\s+1,000\\s+0\\.0%\\s+100\\s+1,100$`, 'm'));

    const store = new SqliteUsageStore(file, 'UTC');
    store.record({ chat: 'telegram:42', kind: 'answer' }, { promptTokens: 500, cachedTokens: 0, completionTokens: 20, estimated: true });
    assert.deepEqual(
      (await store.rows()).map((r) => [r.calls, r.promptTokens, r.completionTokens, r.estimatedCalls, r.estimatedTokens]),
      [[3, 1500, 120, 1, 520]],
    );
    await store.close();
    const after = await memoryCli(['usage'], { WORKSPACE_DIR: ws.dir });
    assert.match(
      after.stdout,
      /^\(520 of these tokens are the bot's own count for 1 call that ended without the server's figures: stopped, timed out or cut off\)$/m,
    );
  } finally {
    await ws.cleanup();
  }
});
