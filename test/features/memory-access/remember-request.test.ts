/**
 * Issue 37 item 3, "remember this" is never lost: a user asks the bot to remember something, the
 * model answers "Noted!" and calls no tool — the words are still a fact of that chat (and of no
 * other), a model that did save is not doubled, a question about the past stores nothing, and a
 * reply never claims a save that did not happen. Through the real daemon and the fake model.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startTestBot, type TestBot } from '../../helpers/app.js';
import { lastUserText, memoryAwareResponder, promptKind, text, toolCalls, toolResults, type Responder } from '../../helpers/fake-llm.js';
import { SqliteMemoryIndex } from '../../../src/index/sqlite-memory-index.js';
import { SCHEMA_VERSION } from '../../../src/index/store/migrations.js';
import { silentLogger } from '../../../src/core/log.js';

/** The live facts of a chat of the test channel, as memory.db holds them. */
function facts(bot: TestBot, chatId: string): string[] {
  return bot.app.parts.index
    .browse!.facts(bot.app.parts.memory.scopeKey('test', chatId), 100)
    .filter((f) => f.retired === null)
    .map((f) => f.content);
}

/**
 * A model that says "Noted!" to anything and saves nothing; "look up X" makes it call
 * search_memory and answer with what it found; consolidation and summaries as a cooperative model.
 */
const notedResponder: Responder = (req, i) => {
  if (promptKind(req) !== 'chat') return memoryAwareResponder(req, i);
  const results = toolResults(req);
  if (results.length > 0) return text(`found: ${results.map((r) => r.content).join(' / ')}`);
  const user = lastUserText(req);
  if (user.startsWith('look up ')) return toolCalls([{ name: 'search_memory', args: { query: user.slice(8) } }]);
  return text('Noted!');
};

test('a "remember that…" the model only answered "Noted!" to is a fact of that chat: /memory lists it, search and the next conversation\'s prompt find it, another chat never sees it', async () => {
  const bot = await startTestBot({ responder: notedResponder });
  try {
    // A month ago: its note line is no longer in the prompt's # Memory, so only the index can bring it back.
    const monthAgo = new Date(Date.now() - 30 * 86_400_000);
    assert.deepEqual(await bot.send('1', 'Remember that my cat is called Miso.', { receivedAt: monthAgo }), ['Noted!'], 'kept: nothing to add to the reply');
    assert.deepEqual(facts(bot, '1'), ['My cat is called Miso.'], 'the words, without "remember that", once');
    assert.deepEqual(facts(bot, '2'), []);

    const [listed] = await bot.send('1', '/memory facts');
    assert.match(listed!, /- My cat is called Miso\./);
    const [other] = await bot.send('2', '/memory facts');
    assert.doesNotMatch(other!, /Miso/);

    // A new conversation: the fact comes back in the prompt's # Relevant Memory, in this chat only.
    await bot.send('1', '/new');
    await bot.send('1', 'what is my cat called');
    const relevant = bot.llm
      .chatRequests()
      .at(-1)!
      .body.messages.filter((m: any) => m.role === 'system' && String(m.content).startsWith('# Relevant Memory'));
    assert.match(String(relevant[0]?.content), /fact: My cat is called Miso\./);
    await bot.send('2', 'what is my cat called');
    assert.doesNotMatch(JSON.stringify(bot.llm.chatRequests().at(-1)!.body.messages), /Miso/, "never in another chat's prompt");

    const [found] = await bot.send('1', 'look up cat');
    assert.match(found!, /fact: My cat is called Miso\./, 'search_memory finds the fact');
    const [notFound] = await bot.send('2', 'look up cat');
    assert.doesNotMatch(notFound!, /Miso/, "another chat's search does not");
  } finally {
    await bot.close();
  }
});

test('a question about the past is not a request: "do you remember my cat?" and its kin store nothing, the request beside them one fact', async () => {
  const bot = await startTestBot({ responder: notedResponder });
  try {
    for (const q of ['Do you remember my cat?', 'remember when we adopted her?', "Can you remember my cat's name?", 'I remember that she liked fish'])
      assert.deepEqual(await bot.send('1', q), ['Noted!'], q);
    // The control: the same chat and model, asked to remember, does store (so the empty list above means "not a request").
    await bot.send('1', 'Remember that she likes fish.');
    assert.deepEqual(facts(bot, '1'), ['She likes fish.']);
  } finally {
    await bot.close();
  }
});

test('each request is one fact: kept by the bot when the model saved nothing, left alone (not doubled) when the model called remember_fact', async () => {
  const bot = await startTestBot({
    responder: (req, i) => {
      if (promptKind(req) !== 'chat') return memoryAwareResponder(req, i);
      if (toolResults(req).length > 0) return text('Noted!');
      if (lastUserText(req).includes('bees')) return toolCalls([{ name: 'remember_fact', args: { fact: "The user's bees live in Porto" } }]);
      return text('Noted!');
    },
  });
  try {
    assert.deepEqual(await bot.send('1', 'Please remember: my bees live in Porto'), ['Noted!']);
    assert.deepEqual(facts(bot, '1'), ["The user's bees live in Porto"], "the model's fact, and no second copy in the user's words");
    assert.deepEqual(await bot.send('2', "Don't forget that my hives face south"), ['Noted!']);
    assert.deepEqual(facts(bot, '2'), ['My hives face south'], 'the model saved nothing: the bot did');
  } finally {
    await bot.close();
  }
});

test('in a group a member\'s request is a fact of the group, with the member\'s name; "My cat is Miso. Remember that!" keeps the sentence before, "remember that" alone the message before', async () => {
  const bot = await startTestBot({ responder: notedResponder });
  try {
    const member = { role: 'member' as const, userName: 'Ann', chat: { kind: 'group' as const, name: 'Beekeepers' } };
    assert.deepEqual(await bot.send('-42', 'remember that my birthday is on May 3', member), ['Noted!']);
    assert.deepEqual(facts(bot, '-42'), ['Ann: My birthday is on May 3']);
    // Bob's "remember that" after Ann's words keeps them as hers.
    await bot.send('-42', 'The hive key is under the red pot.', member);
    await bot.send('-42', 'remember that', { ...member, userName: 'Bob' });
    assert.deepEqual(facts(bot, '-42').sort(), ['Ann: My birthday is on May 3', 'Ann: The hive key is under the red pot.']);
    assert.deepEqual(await bot.send('1', 'My cat is Miso. Remember that!'), ['Noted!']);
    assert.deepEqual(facts(bot, '1'), ['My cat is Miso.']);
    // Alone, "remember that" points at the user's message before it.
    await bot.send('3', 'My dog is called Rex.');
    assert.deepEqual(await bot.send('3', 'remember that'), ['Noted!']);
    assert.deepEqual(facts(bot, '3'), ['My dog is called Rex.']);
  } finally {
    await bot.close();
  }
});

test('the memory index unavailable: the reply says the request was not saved — also when the model called remember_fact, and when it claims a save it did not make', async () => {
  const bot = await startTestBot({
    // A memory.db from a newer program: the index is off (the daemon still answers).
    prepare: async (ws) => {
      const newer = new SqliteMemoryIndex(path.join(ws, 'memory.db'), silentLogger());
      newer.setMeta('schema_version', String(SCHEMA_VERSION + 1));
      newer.close();
    },
    responder: (req, i) => {
      if (promptKind(req) !== 'chat') return memoryAwareResponder(req, i);
      if (toolResults(req).length > 0) return text('Saved!');
      if (lastUserText(req).includes('tool')) return toolCalls([{ name: 'remember_fact', args: { fact: 'The user likes tools' } }]);
      return text('Noted!');
    },
  });
  try {
    assert.equal(bot.app.parts.index.enabled, false);
    const notSaved = 'ℹ️ Not saved: long-term memory is unavailable right now. Please ask me to remember it again later.';
    assert.deepEqual(await bot.send('1', 'Remember that my cat is called Miso.'), [`Noted!\n\n${notSaved}`]);
    assert.deepEqual(await bot.send('1', 'remember that I like tools'), [`Saved!\n\n${notSaved}`]);
    // Not asked in so many words; the model's call did nothing and its answer says "Saved!".
    assert.deepEqual(await bot.send('1', 'my favourite tool is a hive tool'), [
      'Saved!\n\nℹ️ Not saved: the memory call (remember_fact) did not go through. Please ask me to remember it again.',
    ]);
    assert.deepEqual(await bot.send('1', 'Do you remember my cat?'), ['Noted!'], 'no request, no line');
  } finally {
    await bot.close();
  }
});

test('memory switched off (memory.enabled false): a "remember this" is answered with the line that it was not kept', async () => {
  const bot = await startTestBot({ responder: notedResponder, runtimeConfig: { memory: { enabled: false } } });
  try {
    assert.deepEqual(await bot.send('1', 'keep in mind that I am vegan'), [
      'Noted!\n\nℹ️ Not saved: memory is switched off for this bot (runtime setting memory.enabled), so nothing is kept beyond this conversation.',
    ]);
    assert.deepEqual(facts(bot, '1'), []);
  } finally {
    await bot.close();
  }
});
