/**
 * The compaction issue's "done when", as a test: a scripted 200-message session with a small
 * context limit never sends a request over the limit, consolidates into MEMORY.md/HISTORY.md,
 * and leaves a [Conversation summary] first; with summaries failing it still completes with
 * truncation markers and [raw-fallback] history entries.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot } from '../helpers/app.js';
import { memoryAwareResponder, promptKind, type Responder } from '../helpers/fake-llm.js';
import { createTokenCounter } from '../../src/llm/tokens.js';

const LIMIT = 2000;
const runtimeConfig = { compaction: { maxContextTokens: LIMIT, keepLastMessages: 20 } };

function userText(i: number): string {
  return `Message ${i}: I am planning trip number ${i} to city ${i % 17} with my friend Alex; the budget is ${i * 10} euros.`;
}

async function runSession(responder: Responder) {
  const bot = await startTestBot({ responder, runtimeConfig });
  const counter = await createTokenCounter('o200k_base');
  const replies: string[] = [];
  for (let i = 1; i <= 200; i++) replies.push(...(await bot.send('c', userText(i))));
  const chat = bot.llm.chatRequests().filter((r) => promptKind(r) === 'chat');
  const sizes = chat.map((r) => counter.countMessages(r.body.messages) + counter.countTools(r.body.tools ?? []));
  const memDir = path.join(bot.workspace, 'memory', 'test:c');
  const read = (f: string) => readFile(path.join(memDir, f), 'utf8').catch(() => '');
  const session = JSON.parse(await readFile(path.join(bot.workspace, 'sessions', 'test:c.json'), 'utf8'));
  const result = { bot, replies, sizes, memory: await read('MEMORY.md'), history: await read('HISTORY.md'), session };
  await bot.close();
  return result;
}

test('200 messages under a 2,000-token limit: never over the limit, consolidated into memory, summary first', async () => {
  const r = await runSession(memoryAwareResponder);
  assert.equal(r.sizes.length, 200, 'one chat request per message');
  assert.ok(Math.max(...r.sizes) <= LIMIT, `largest request ${Math.max(...r.sizes)} tokens > ${LIMIT}`);
  assert.equal(r.replies.filter((x) => x.startsWith('echo: Message')).length, 200, 'every message answered');
  assert.ok(
    r.replies.some((x) => /Compacted the conversation: \d+ messages summarized, memory updated/.test(x)),
    'the user is told',
  );
  assert.match(r.memory, /consolidated \d+ messages/);
  assert.match(r.history, /^## \d{4}-\d{2}-\d{2}T/m);
  assert.match(r.history, /Consolidated \d+ messages\. First: .*Message 1:/, 'the first messages reached history');
  assert.ok(r.session.messages[0].content.startsWith('[Conversation summary]\n'));
  assert.equal(r.session.messages[0].role, 'system');
  assert.ok(r.session.metadata.messagesCompacted > 100);
  assert.equal(r.session.metadata.lastCompaction.kind, 'summary');
  // Nothing lost: every user message is in history (as consolidated ranges) or still in the session.
  const inSession = new Set(r.session.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content));
  assert.ok(inSession.has(userText(200)));
});

test('with summaries and consolidation failing (500) the run completes with truncation markers and [raw-fallback] history', async () => {
  const failing: Responder = (req, i) => (promptKind(req) === 'chat' ? memoryAwareResponder(req, i) : { status: 500 });
  const r = await runSession(failing);
  assert.ok(Math.max(...r.sizes) <= LIMIT, `largest request ${Math.max(...r.sizes)} tokens > ${LIMIT}`);
  assert.equal(r.replies.filter((x) => x.startsWith('echo: Message')).length, 200);
  assert.ok(r.replies.some((x) => x.includes('older messages removed')));
  assert.ok(r.session.messages.some((m: any) => m.role === 'system' && /^\[\d+ earlier messages removed — kept in memory\]$/.test(m.content)));
  assert.match(r.history, /\[raw-fallback\]/);
  assert.match(r.history, /Message 1\d?:/, 'raw fallback carries the removed words');
  assert.equal(r.memory, '', 'a failed consolidation never touches MEMORY.md');
  assert.equal(r.session.metadata.lastCompaction.kind, 'truncation');
});
