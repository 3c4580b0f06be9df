/**
 * Issue 15, what the model receives turn after turn (fake LLM recording every request): no
 * exchange twice, a system prompt that stays byte-identical while nothing in it changes, each
 * request starting with the whole previous one, and `# Relevant Memory` after the history and
 * never in the session file; after a compaction, the summary stands for the exchanges it
 * replaced (their note lines are not sent again), and `# Relevant Memory` does not repeat a note
 * line of `# Memory`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../../helpers/app.js';
import { memoryAwareResponder, promptKind, type RecordedRequest, type Responder } from '../../helpers/fake-llm.js';

const at = (minute: number) => new Date(Date.UTC(2026, 2, 10, 12, minute));
const chatRequests = (bot: TestBot): RecordedRequest[] => bot.llm.chatRequests().filter((r) => promptKind(r) === 'chat');
const systemPrompt = (req: RecordedRequest): string => String(req.body.messages[0].content);

test('a steady conversation: no note line of it in the system prompt, identical system prompts, each request starts with the whole previous one', async () => {
  const bot = await startTestBot({
    prepare: async (ws) => {
      const dir = path.join(ws, 'memory', 'test:1');
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, 'MEMORY.md'), '- The user lives in Porto.\n');
      await writeFile(path.join(dir, '2026-03-10.md'), '[09:00] User: from this morning | Assistant: noted.\n');
    },
  });
  try {
    const texts = ['first question about tea', 'second question about coffee', 'third question about water', 'fourth question about juice'];
    for (const [i, t] of texts.entries()) await bot.send('1', t, { receivedAt: at(i) });
    const notes = await readFile(path.join(bot.workspace, 'memory', 'test:1', '2026-03-10.md'), 'utf8');
    assert.equal(notes.trim().split('\n').length, 5, 'every exchange has its line in the note file');
    const reqs = chatRequests(bot);
    assert.equal(reqs.length, 4);
    for (const req of reqs) {
      const sys = systemPrompt(req);
      assert.match(sys, /from this morning/, "an earlier conversation's line is there");
      for (const t of texts) assert.ok(!sys.includes(t), `the system prompt repeats "${t}"`);
    }
    for (let i = 1; i < reqs.length; i++) {
      assert.equal(systemPrompt(reqs[i]!), systemPrompt(reqs[0]!), `turn ${i + 1}: system prompt changed`);
      const prev = reqs[i - 1]!.body.messages;
      assert.deepEqual(reqs[i]!.body.messages.slice(0, prev.length), prev, `request ${i + 1} does not start with request ${i}`);
    }
  } finally {
    await bot.close();
  }
});

test('the system prompt changes when MEMORY.md is edited, and the next turn is stable again', async () => {
  const bot = await startTestBot();
  try {
    await bot.send('1', 'hello', { receivedAt: at(0) });
    await bot.send('1', 'again', { receivedAt: at(1) });
    const dir = path.join(bot.workspace, 'memory', 'test:1');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'MEMORY.md'), '- The user has a dog named Rex.\n');
    await bot.send('1', 'and now', { receivedAt: at(2) });
    await bot.send('1', 'once more', { receivedAt: at(3) });
    const [a, b, c, d] = chatRequests(bot).map(systemPrompt);
    assert.equal(a, b);
    assert.notEqual(b, c);
    assert.match(c!, /dog named Rex/);
    assert.equal(c, d);
  } finally {
    await bot.close();
  }
});

test('# Relevant Memory goes after the history, just before the newest user message, and never into the session file', async () => {
  const bot = await startTestBot();
  try {
    // Ten days ago: out of Recent Context (7 days), so only the index remembers it.
    await bot.send('1', 'My cat is called Miso and she loves tuna', { receivedAt: new Date(at(0).getTime() - 10 * 86_400_000) });
    await bot.send('1', '/new');
    await bot.send('1', 'Good morning', { receivedAt: at(2) });
    await bot.send('1', 'Should I buy my cat a new toy?', { receivedAt: at(3) });
    const req = chatRequests(bot).at(-1)!;
    const msgs = req.body.messages as Array<{ role: string; content: string }>;
    assert.deepEqual(
      msgs.map((m) => m.role),
      ['system', 'user', 'assistant', 'system', 'user'],
    );
    assert.ok(!msgs[0]!.content.includes('# Relevant Memory'));
    assert.match(msgs[3]!.content, /^# Relevant Memory\n.*My cat is called Miso/);
    assert.equal(msgs[4]!.content, 'Should I buy my cat a new toy?');
    const file = await readFile(path.join(bot.workspace, 'sessions', 'test:1.json'), 'utf8');
    assert.ok(!file.includes('Relevant Memory'), 'the per-message context is not stored in the session');
    assert.deepEqual(
      JSON.parse(file).messages.map((m: { role: string }) => m.role),
      ['user', 'assistant', 'user', 'assistant'],
    );
  } finally {
    await bot.close();
  }
});

test('# Relevant Memory does not repeat what # Memory already holds as a note line', async () => {
  const bot = await startTestBot();
  try {
    await bot.send('1', 'My cat is called Miso and she loves tuna', { receivedAt: at(0) });
    await bot.send('1', '/new');
    await bot.send('1', 'Should I buy my cat a new toy?', { receivedAt: at(3) });
    const msgs = chatRequests(bot).at(-1)!.body.messages as Array<{ role: string; content: string }>;
    assert.match(
      msgs[0]!.content,
      /## Today's Notes\n\[12:00\] User: My cat is called Miso and she loves tuna \| Assistant: /,
      'the earlier conversation is in # Memory',
    );
    assert.ok(!msgs.slice(1).some((m) => m.content.includes('Miso')), 'and not a second time under # Relevant Memory');
  } finally {
    await bot.close();
  }
});

/**
 * After a compaction with a summary, the exchanges the summary replaced do not come back as
 * `## Today's Notes` lines (they would travel twice: as the summary and as lines, in every
 * request until the next compaction); lines of other conversations and days stay. Without a
 * summary (truncation) nothing stands for the dropped exchanges, so their lines do come back.
 */
const LADDER = 'My neighbour Zebulon lends me his ladder on Sundays, and I return it on Mondays with a thank-you note';

async function compactedChat(responder: Responder, compactions = 1) {
  const bot = await startTestBot({
    responder,
    runtimeConfig: { compaction: { maxContextTokens: 2000, keepLastMessages: 4 }, memory: { budgetPercent: 40 } },
    prepare: async (ws) => {
      const dir = path.join(ws, 'memory', 'test:1');
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, '2026-03-09.md'), '[18:00] User: yesterday about the garden | Assistant: noted.\n');
      await writeFile(path.join(dir, '2026-03-10.md'), '[09:00] User: from this morning | Assistant: noted.\n');
    },
  });
  try {
    const texts: string[] = [];
    let compactedAt = -1;
    let seen = 0;
    for (let i = 0; i < 50 && seen < compactions; i++) {
      texts.push(i === 1 ? LADDER : `question ${i} about the trip to city ${i} with a budget of ${i * 10} euros and a few more words to fill the context`);
      const replies = await bot.send('1', texts[i]!, { receivedAt: at(i) });
      if (replies.some((r) => r.includes('Compacted the conversation'))) [compactedAt, seen] = [i, seen + 1];
    }
    assert.equal(seen, compactions, 'the conversation was compacted');
    texts.push('one more question after the compaction');
    await bot.send('1', texts.at(-1)!, { receivedAt: at(compactedAt + 1) });
    const req = chatRequests(bot).at(-1)!;
    const msgs = req.body.messages as Array<{ role: string; content: string }>;
    const asMessages = new Set(msgs.filter((m) => m.role === 'user').map((m) => m.content));
    const gone = texts.filter((t) => !asMessages.has(t));
    assert.ok(gone.length > 3, 'compaction removed exchanges from the conversation');
    return { bot, msgs, system: systemPrompt(req), gone };
  } catch (err) {
    await bot.close();
    throw err;
  }
}

test('after a summary: the exchanges it replaced are not sent again as note lines; other days and conversations still are', async () => {
  const { bot, msgs, system, gone } = await compactedChat(memoryAwareResponder);
  try {
    assert.ok(
      msgs.some((m) => m.role === 'system' && m.content.startsWith('[Conversation summary]\n')),
      'the summary is sent',
    );
    for (const t of gone) assert.ok(!system.includes(t), `"${t}" is in the summary and again in the system prompt`);
    assert.match(system, /## Today's Notes\n\[09:00\] User: from this morning/, "an earlier conversation's line stays");
    assert.match(system, /## Recent Context\n### 2026-03-09\n\[18:00\] User: yesterday about the garden/, "yesterday's notes stay");
    const notes = await readFile(path.join(bot.workspace, 'memory', 'test:1', '2026-03-10.md'), 'utf8');
    for (const t of gone) assert.ok(notes.includes(`User: ${t} |`), 'the note file keeps every line');
    // What the summary replaced can still come back word for word when a message is about it.
    assert.ok(gone.includes(LADDER));
    await bot.send('1', 'Who lends me a ladder?', { receivedAt: at(58) });
    const asked = chatRequests(bot).at(-1)!.body.messages as Array<{ role: string; content: string }>;
    assert.match(asked.at(-2)!.content, /^# Relevant Memory\n(.*\n)*.*said: My neighbour Zebulon lends me his ladder/);
    // /new drops the summary: the conversation's lines count again (the newest, within the budget).
    await bot.send('1', '/new');
    await bot.send('1', 'a fresh start', { receivedAt: at(59) });
    const fresh = systemPrompt(chatRequests(bot).at(-1)!);
    assert.ok(fresh.includes(`User: ${gone.at(-1)} |`), 'the newest summarized exchange is back after /new');
  } finally {
    await bot.close();
  }
});

test('a second summary folds in the first: what either replaced stays out of # Memory', async () => {
  const { bot, system, gone } = await compactedChat(memoryAwareResponder, 2);
  try {
    assert.ok(gone.length > 12, 'two compactions removed exchanges');
    for (const t of gone) assert.ok(!system.includes(t), `"${t}" is in the summary and again in the system prompt`);
    const session = JSON.parse(await readFile(path.join(bot.workspace, 'sessions', 'test:1.json'), 'utf8'));
    const summaries = session.messages.filter((m: { content: string }) => m.content.startsWith('[Conversation summary]'));
    assert.equal(summaries.length, 1, 'one summary, the earlier folded in');
    assert.ok(summaries[0].covers.length >= gone.length - 1, 'it covers the exchanges of both compactions');
  } finally {
    await bot.close();
  }
});

test('after a truncation (no summary): the dropped exchanges come back as note lines', async () => {
  const noSummary: Responder = (req, i) => (promptKind(req) === 'chat' ? memoryAwareResponder(req, i) : { status: 500 });
  const { bot, msgs, system, gone } = await compactedChat(noSummary);
  try {
    assert.ok(!msgs.some((m) => m.content.startsWith('[Conversation summary]')));
    assert.ok(
      gone.some((t) => system.includes(`User: ${t} |`)),
      'lines of dropped exchanges are in # Memory',
    );
  } finally {
    await bot.close();
  }
});
