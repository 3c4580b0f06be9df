/**
 * `/new` when saving to memory fails (the model hangs past CONSOLIDATION_TIMEOUT_MS, or answers
 * 500): the session is still cleared, the reply says the save failed and where the words are,
 * and they are there — every message, whole, in the history log.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadedSession, startTestBot } from '../helpers/app.js';
import { memoryAwareResponder, promptKind, type Responder } from '../helpers/fake-llm.js';

const CHAT = 'n';
const LONG = `The alarm code is 4471, and ${'the spare key hangs behind the third picture in the hall, '.repeat(6)}end of note.`;

async function newWith(responder: Responder, env: Record<string, string> = {}) {
  const bot = await startTestBot({ responder, env });
  try {
    await bot.send(CHAT, 'Remember the code word: pelican.');
    await bot.send(CHAT, LONG);
    for (let i = 0; i < 6; i++) await bot.send(CHAT, `Filler message ${i}.`);
    const replies = await bot.send(CHAT, '/new');
    const history = await readFile(path.join(bot.workspace, 'memory', `test:${CHAT}`, 'HISTORY.md'), 'utf8');
    return { replies, history, messages: loadedSession(bot, CHAT).messages.length };
  } finally {
    await bot.close();
  }
}

const hangOnConsolidation: Responder = (req, i) => (promptKind(req) === 'consolidation' ? { hang: true } : memoryAwareResponder(req, i));

test('/new with the model hanging: "Session cleared", the save failed (timeout, in seconds), nothing lost and where it is', async () => {
  const { replies, history, messages } = await newWith(hangOnConsolidation, { CONSOLIDATION_TIMEOUT_MS: '1000' });
  assert.equal(messages, 0, 'the session is cleared');
  assert.deepEqual(replies, [
    'Session cleared, but saving it to memory failed: the model did not answer within 1 s.\n' +
      'Nothing was lost: the whole conversation is in the history log (HISTORY.md, a [raw-fallback] entry), where I can still look it up.',
  ]);
  assert.match(history, /\[raw-fallback\]/);
  // Every message, whole: the first of 16 (not only the last 10) and the long one uncut.
  assert.match(history, /pelican/);
  assert.ok(history.includes(LONG), 'the long message is whole');
  assert.match(history, /Filler message 5\./);
});

test('/new with the model answering 500: the reply says it was refused, the words are in the history log', async () => {
  const { replies, history } = await newWith((req, i) => (promptKind(req) === 'consolidation' ? { status: 500 } : memoryAwareResponder(req, i)));
  assert.match(replies[0]!, /^Session cleared, but saving it to memory failed: the model answered with an error\.\nNothing was lost/);
  assert.match(history, /pelican/);
});

test('/new when the save works says only "Session cleared."', async () => {
  const { replies, history } = await newWith(memoryAwareResponder);
  assert.deepEqual(replies, ['Session cleared.']);
  assert.doesNotMatch(history, /raw-fallback/);
});
