/**
 * Issue 15, what the model receives turn after turn (fake LLM recording every request): no
 * exchange twice, a system prompt that stays byte-identical while nothing in it changes, each
 * request starting with the whole previous one, and `# Relevant Memory` after the history and
 * never in the session file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../helpers/app.js';
import { promptKind, type RecordedRequest } from '../helpers/fake-llm.js';

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
    await bot.send('1', 'My cat is called Miso and she loves tuna', { receivedAt: at(0) });
    await bot.send('1', '/new');
    await bot.send('1', 'Good morning', { receivedAt: at(2) });
    await bot.send('1', 'Should I buy my cat a new toy?', { receivedAt: at(3) });
    const req = chatRequests(bot).at(-1)!;
    const msgs = req.body.messages as Array<{ role: string; content: string }>;
    assert.deepEqual(msgs.map((m) => m.role), ['system', 'user', 'assistant', 'system', 'user']);
    assert.ok(!msgs[0]!.content.includes('# Relevant Memory'));
    assert.match(msgs[3]!.content, /^# Relevant Memory\n.*My cat is called Miso/);
    assert.equal(msgs[4]!.content, 'Should I buy my cat a new toy?');
    const file = await readFile(path.join(bot.workspace, 'sessions', 'test:1.json'), 'utf8');
    assert.ok(!file.includes('Relevant Memory'), 'the per-message context is not stored in the session');
    assert.deepEqual(JSON.parse(file).messages.map((m: { role: string }) => m.role), ['user', 'assistant', 'user', 'assistant']);
  } finally {
    await bot.close();
  }
});
