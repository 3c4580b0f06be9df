/**
 * AutoCompaction (18) and /stop: a compaction runs on its own timeouts (its LLM calls are not the
 * turn's), so a /stop can come while it waits for the summary. The stop marker the stopped turn
 * leaves is written after the compaction took its copy of the conversation; the compaction's
 * new conversation must keep it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot } from '../helpers/app.js';
import { waitFor } from '../helpers/telegram.js';
import { memoryAwareResponder, promptKind, type Responder } from '../helpers/fake-llm.js';

test("risk: /stop during a turn's auto-compaction — the compaction's rewrite of the conversation wiped out the stop marker", async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  // The summary is held until /stop has been answered.
  const responder: Responder = async (req, i) => {
    if (promptKind(req) === 'summary') await held;
    return memoryAwareResponder(req, i);
  };
  const bot = await startTestBot({ responder, runtimeConfig: { compaction: { maxContextTokens: 2_000, keepLastMessages: 2 } } });
  try {
    const summaryAsked = () => bot.llm.chatRequests().some((r) => promptKind(r) === 'summary');
    const long = (i: number) => `Message ${i}: ${'the kettle in the kitchen is blue and the teapot is green; '.repeat(12)}`;
    // Message after message until one's turn compacts first (and waits for its summary).
    let compacting: Promise<string[]> | undefined;
    let last = '';
    for (let i = 1; !compacting; i++) {
      assert.ok(i < 30, 'the conversation grows past the compaction threshold');
      last = long(i);
      let answered = false;
      const sent = bot.send('1', last).finally(() => (answered = true));
      await waitFor(() => answered || summaryAsked(), 10_000, 'the answer or a summary request');
      if (!answered) compacting = sent;
    }
    const [stopped] = await bot.send('1', '/stop');
    assert.equal(stopped, 'Stopped before an answer was written; your message is kept. Your next message is answered as usual.');
    release();
    assert.deepEqual(await compacting, [], 'the stopped turn says nothing more');
    await bot.app.parts.sessions.flush();

    const file = JSON.parse(await readFile(path.join(bot.workspace, 'sessions', 'test:1.json'), 'utf8')) as {
      messages: Array<{ role: string; content: string }>;
    };
    assert.ok(
      file.messages[0]!.content.startsWith('[Conversation summary]'),
      `the compaction's summary leads: ${JSON.stringify(file.messages.map((m) => m.role))}`,
    );
    const shown = (m: { role: string; content: string }) => [m.role, m.content === last ? '(the stopped message)' : m.content.slice(0, 40)];
    const stopMarker = ['assistant', '[stopped before answering]'];
    assert.deepEqual(file.messages.slice(-2).map(shown), [['user', '(the stopped message)'], stopMarker], 'the stop marker follows the stopped message');
    // And the conversation the bot goes on with is the same.
    assert.deepEqual(await bot.send('1', 'still there?'), ['echo: still there?']);
  } finally {
    release();
    await bot.close();
  }
});
