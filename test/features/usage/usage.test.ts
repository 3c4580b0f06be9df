/**
 * Usage accounting (issue 15): the `usage` of every response the fake LLM gives lands in
 * usage.db per chat per day, background calls apart from answers; /status shows today's tokens
 * and the cached share; `npm run memory -- usage` prints one table per chat.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startTestBot, loadedSession } from '../../helpers/app.js';
import { completion, memoryAwareResponder, promptKind, type Responder } from '../../helpers/fake-llm.js';
import { SqliteUsageStore } from '../../../src/features/usage/sqlite-usage.js';
import { tempDir } from '../../helpers/workspace.js';
import { memoryCli } from '../../helpers/child.js';

/** Chat answers report 1,000 prompt tokens of which 600 cached, 50 completion; background 200 + 20. */
const billing: Responder = (req, i) => {
  if (promptKind(req) !== 'chat') {
    const r = memoryAwareResponder(req, i) as { json: any };
    return { json: { ...r.json, usage: { prompt_tokens: 200, completion_tokens: 20, total_tokens: 220 } } };
  }
  const body = completion('fine') as any;
  return { json: { ...body, usage: { prompt_tokens: 1000, completion_tokens: 50, total_tokens: 1050, prompt_tokens_details: { cached_tokens: 600 } } } };
};

test("usage from the server's `usage` field lands in /status: today's tokens of the chat, answers and background apart, cached share", async () => {
  const bot = await startTestBot({ responder: billing });
  try {
    await bot.send('1', 'hello');
    await bot.send('1', 'again');
    await bot.send('2', 'another chat');
    await bot.send('1', '/compact 1');
    const [status] = await bot.send('1', '/status full');
    // 2 answers × 1,050 = 2,100; consolidation + summary 2 × 220 = 440; 1,200 of 2,400 prompt tokens cached.
    assert.match(status!, /^Tokens today: 2,540 \(answers 2,100, background 440; prompt 2,400, completion 140\) · 50\.0% of prompt tokens cached$/m);
    const [status2] = await bot.send('2', '/status full');
    assert.match(status2!, /^Tokens today: 1,050 \(answers 1,050, background 0;.*60\.0% of prompt tokens cached$/m);

    const rows = await bot.app.parts.usage.rows({ chat: 'test:1' });
    assert.deepEqual(
      rows.map((r) => [r.kind, r.calls, r.promptTokens, r.cachedTokens, r.completionTokens]),
      [
        ['answer', 2, 2000, 1200, 100],
        ['consolidation', 1, 200, 0, 20],
        ['summary', 1, 200, 0, 20],
      ],
    );
    assert.equal(rows[0]!.day, new Date().toISOString().slice(0, 10), 'the day in TZ (UTC in tests)');
  } finally {
    await bot.close();
  }
});

test('`npm run memory -- usage --days 7` prints one table per chat; bad --days exits 2', async () => {
  const ws = await tempDir();
  try {
    const store = new SqliteUsageStore(path.join(ws.dir, 'usage.db'), 'UTC');
    store.record({ chat: 'telegram:42', kind: 'answer' }, { promptTokens: 1000, cachedTokens: 250, completionTokens: 100 });
    store.record({ chat: 'telegram:42', kind: 'summary' }, { promptTokens: 300, cachedTokens: 0, completionTokens: 30 });
    store.record({ chat: 'telegram:42', kind: 'answer' }, { promptTokens: 500, cachedTokens: 0, completionTokens: 10 }, new Date(Date.now() - 3 * 86_400_000));
    store.record({ chat: 'telegram:7', kind: 'answer' }, { promptTokens: 10, cachedTokens: 0, completionTokens: 1 }, new Date(Date.now() - 30 * 86_400_000));
    await store.close();
    const run = (args: string[]) => memoryCli(['usage', ...args], { WORKSPACE_DIR: ws.dir });
    const out = await run(['--days', '7']);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^telegram:42$/m);
    assert.doesNotMatch(out.stdout, /telegram:7/, 'older than 7 days');
    const today = new Date().toISOString().slice(0, 10);
    // day, calls, answers, background, prompt, cached, completion, total
    assert.match(out.stdout, new RegExp(`^${today}\\s+2\\s+1,100\\s+330\\s+1,300\\s+19\\.2%\\s+130\\s+1,430$`, 'm'));
    assert.match(out.stdout, /^all\s+3\s+1,610\s+330\s+1,800\s+13\.9%\s+140\s+1,940$/m);
    const month = await run(['--days', '31']);
    assert.match(month.stdout, /^telegram:7$/m);
    const bad = await run(['--days', 'week']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--days takes a whole number/);
  } finally {
    await ws.cleanup();
  }
});

test('DAILY_TOKEN_BUDGET: once the chat has used it, the next message gets one line saying so and when it resets, and never reaches the model; background calls pause too', async () => {
  const bot = await startTestBot({ responder: billing, env: { DAILY_TOKEN_BUDGET: '2000' } });
  try {
    assert.deepEqual(await bot.send('1', 'first'), ['fine']);
    assert.deepEqual(await bot.send('1', 'second'), ['fine'], '1,050 used: under the budget');
    const before = bot.llm.requests.length;
    const [refusal, ...more] = await bot.send('1', 'third, over the budget');
    assert.deepEqual(more, []);
    assert.match(
      refusal!,
      /^This chat has used its daily budget of 2,000 tokens \(2,100 today\), so your message was saved but not sent to the model\. The budget resets at midnight \(UTC\), in (\d+ h )?\d+ min\.$/,
    );
    assert.equal(bot.llm.requests.length, before, 'nothing reached the model');
    const session = loadedSession(bot, '1');
    assert.equal(session.messages.at(-1)!.content, 'third, over the budget', 'the words are kept');

    // Background work of this chat pauses: /new asks the model for no consolidation (the
    // conversation goes to the history log as it is). /compact says the budget: group-limits.test.ts.
    const [cleared] = await bot.send('1', '/new');
    assert.match(
      cleared!,
      /^Session cleared, but saving it to memory failed: this chat's daily token budget is used up\.\nNothing was lost: the whole conversation is in the history log/,
    );
    assert.equal(bot.llm.requests.length, before, 'no consolidation call');
    const [status] = await bot.send('1', '/status full');
    assert.match(status!, /daily budget 2,000 \(100\.0% used\)/);

    // Another chat has its own budget.
    assert.deepEqual(await bot.send('2', 'hello from another chat'), ['fine']);
  } finally {
    await bot.close();
  }
});

test('DAILY_TOKEN_BUDGET: users in TELEGRAM_ALLOWED_USERS are exempt, unless DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS=false', async () => {
  for (const [exempt, expectBlocked] of [
    [undefined, false],
    ['false', true],
  ] as const) {
    const bot = await startTestBot({
      responder: billing,
      env: { DAILY_TOKEN_BUDGET: '1000', TELEGRAM_ALLOWED_USERS: '42', ...(exempt ? { DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS: exempt } : {}) },
    });
    try {
      const owner = { channel: 'telegram', userId: '42' };
      assert.deepEqual(await bot.send('42', 'one', owner), ['fine']);
      const [second] = await bot.send('42', 'two', owner);
      if (expectBlocked) assert.match(second!, /daily budget of 1,000 tokens/);
      else assert.equal(second, 'fine');
      // A stranger in another chat is held to the budget either way.
      await bot.send('7', 'hi', { channel: 'telegram', userId: '7' });
      assert.match((await bot.send('7', 'again', { channel: 'telegram', userId: '7' }))[0]!, /daily budget/);
    } finally {
      await bot.close();
    }
  }
});
