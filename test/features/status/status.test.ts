/**
 * /status through the real daemon: the owner's reads as a few lines in plain words (the model,
 * how full the conversation is, memory, reminders, today's tokens, whether all is well) with no
 * setting names or timings; what is not well is said there in words; `/status full` holds the
 * operator's detail; a group member keeps the short status and is refused the full one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBot } from '../../helpers/app.js';
import { text } from '../../helpers/fake-llm.js';
import { describeReminder } from '../../../src/features/reminders/service.js';

const GROUP = { chat: { kind: 'group' as const, name: 'Team' } };

test("an owner's /status is a few lines in plain words: model, how full the conversation is, memory, reminders, today — no setting names or timings", async () => {
  const bot = await startTestBot({ env: { DAILY_TOKEN_BUDGET: '100000' } });
  try {
    await bot.send('1', 'hello there');
    const s = bot.app.parts;
    await s.memory.forChat('test', '1').writeMemory('# Memory\n- The user lives in Oslo.\n- The user has a cat named Miso.\n');
    s.index.saveFacts([{ content: 'The user prefers tea to coffee.', scope: s.memory.scopeKey('test', '1') }]);
    const r = await s.reminders.schedule('test', '1', { at: new Date(Date.now() + 30 * 86_400_000).toISOString(), text: 'call the dentist' });
    assert.ok(r.ok);

    const [status] = await bot.send('1', '/status');
    const lines = status!.split('\n');
    assert.deepEqual(lines.slice(0, 2), ['📊 Status', 'Model: gpt-4o-mini, reads images']);
    assert.match(
      lines[2]!,
      /^Conversation: 2 messages, (under 1|\d)% of what the model can read at once — the older part is summarised into memory well before it is full$/,
    );
    assert.equal(lines[3], 'Memory: on — long-term memory holds 2 entries, and 1 saved fact');
    assert.equal(lines[4], `Reminders: 1 pending, the next: ${describeReminder(r.reminder)}`);
    assert.match(lines[5]!, /^Today: [\d,]+ tokens used, \d+\.\d% of the daily budget \(100,000\)$/);
    assert.deepEqual(lines.slice(6), ['All is well.', 'The details: /status full']);
    // What made the old /status an operator's dump stays out of it.
    assert.doesNotMatch(status!, /\d(\.\d)?ms\b|Session:|Tokenizer|compaction\.|maxContextTokens|Tokens by role|Last turn/);
  } finally {
    await bot.close();
  }
});

test('what is not well is said in /status in words: an answer from the fallback model, memory off', async () => {
  const bot = await startTestBot({
    env: { LLM_MODEL: 'model-a', LLM_FALLBACK: 'model-b', LLM_MAX_RETRIES: '0' },
    runtimeConfig: { memory: { enabled: false } },
    responder: (req) => (req.body.model === 'model-a' ? { status: 500, json: { error: { message: 'down' } } } : text('from model-b')),
  });
  try {
    assert.deepEqual(await bot.send('1', 'hello'), ['from model-b']);
    const [status] = await bot.send('1', '/status');
    assert.match(status!, /^Memory: off — nothing is remembered beyond this conversation$/m);
    assert.match(status!, /^⚠️ Needs a look: the last answer came from model-b, because model-a failed\.$/m);
    assert.doesNotMatch(status!, /All is well/);
  } finally {
    await bot.close();
  }
});

test("/status full gives the owner the operator's detail; a group member keeps the short status and is refused the full one", async () => {
  const bot = await startTestBot();
  try {
    await bot.send('1', 'hello there');
    const [full] = await bot.send('1', '/status full');
    for (const line of [/^Session: test:1 /m, /^Context: [\d,]+ \/ [\d,]+ tokens/m, /^Tokens by role: /m, /^Tokenizer: /m, /^Last turn: .*\d\.\dms/m])
      assert.match(full!, line);
    assert.equal((await bot.send('1', '/status FULL'))[0], full, 'any case');
    assert.equal((await bot.send('1', '/status everything'))[0], '"/status everything" — send /status, or /status full for the details.');

    await bot.send('-100200', 'hi all', { ...GROUP, role: 'member', userId: '5' });
    const [short] = await bot.send('-100200', '/status', { ...GROUP, role: 'member', userId: '5' });
    assert.match(short!, /^Messages: 2 in this conversation, /m);
    assert.match(short!, /The full status is for the bot's owner\.$/);
    const [refused] = await bot.send('-100200', '/status full', { ...GROUP, role: 'member', userId: '5' });
    assert.equal(refused, "Only the bot's owner can use /status full in this group, so nothing was done. Ask them if it is needed.");
    const [owners] = await bot.send('-100200', '/status full', { ...GROUP, role: 'owner', userId: '7' });
    assert.match(owners!, /^Session: test:-100200 /m);
  } finally {
    await bot.close();
  }
});
