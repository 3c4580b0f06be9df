import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot } from '../helpers/app.js';
import { text } from '../helpers/fake-llm.js';

test('a message flows through the pipeline to the model and back, and the session is on disk', async () => {
  const bot = await startTestBot();
  try {
    const replies = await bot.send('42', 'hello there');
    assert.deepEqual(replies, ['echo: hello there']);
    const req = bot.llm.chatRequests()[0]!;
    assert.equal(req.body.messages[0].role, 'system');
    assert.equal(req.body.messages.at(-1).content, 'hello there');
    assert.ok(req.body.tools.some((t: any) => t.function.name === 'get_current_time'));
    const file = JSON.parse(await readFile(path.join(bot.workspace, 'sessions', 'test:42.json'), 'utf8'));
    assert.deepEqual(
      file.messages.map((m: any) => [m.role, m.content]),
      [
        ['user', 'hello there'],
        ['assistant', 'echo: hello there'],
      ],
    );
    assert.equal(file.id, 'test:42');
    assert.equal(file.state, 'ACTIVE');
    for (const k of ['id', 'channelType', 'chatId', 'messages', 'metadata', 'state', 'createdAt', 'updatedAt']) assert.ok(k in file, k);
  } finally {
    await bot.close();
  }
});

test('the user message is durable (fsynced journal) before the LLM is called, and in the session file after the turn', async () => {
  let journalAtCall = '';
  const bot = await startTestBot({
    responder: async () => {
      journalAtCall = await readFile(path.join(bot.workspace, 'inbox.jsonl'), 'utf8');
      return text('ok');
    },
  });
  try {
    await bot.send('7', 'remember this sentence');
    assert.match(journalAtCall, /"t":"in".*remember this sentence/);
    const file = JSON.parse(await readFile(path.join(bot.workspace, 'sessions', 'test:7.json'), 'utf8'));
    assert.deepEqual(
      file.messages.map((m: any) => m.content),
      ['remember this sentence', 'ok'],
    );
  } finally {
    await bot.close();
  }
});
