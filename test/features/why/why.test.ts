/**
 * `/why` through the real daemon (startTestBot, the fake LLM): what an answer was built from is
 * recorded as it is made and listed — a fact of an earlier conversation that came in through
 * `# Relevant Memory`, with its id; what a memory tool returned — for the answer replied to or
 * the last one; a forget leaves no byte of its words in the records; a group member is refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startTestBot, type TestBot } from '../../helpers/app.js';
import { lastUserText, memoryAwareResponder, promptKind, text, toolCalls, toolResults, type Responder } from '../../helpers/fake-llm.js';
import { filesContaining } from '../../helpers/workspace.js';

const responder: Responder = (req, i) => {
  if (promptKind(req) !== 'chat') return memoryAwareResponder(req, i);
  if (toolResults(req).length > 0) return text('Found it.');
  const said = lastUserText(req);
  if (said.startsWith('please remember')) return toolCalls([{ name: 'remember_fact', args: { fact: 'Marta lives in Porto' } }]);
  if (said.startsWith('look up')) return toolCalls([{ name: 'search_memory', args: { query: 'Marta' } }]);
  return text('She lives in Porto.');
};

function factIds(bot: TestBot, chatId: string): Array<{ id: string; content: string }> {
  return bot.app.parts.index
    .browse!.facts(bot.app.parts.memory.scopeKey('test', chatId), 100)
    .filter((f) => f.retired === null)
    .map((f) => ({ id: f.id, content: f.content }));
}

/** A fact saved in one conversation, then a new conversation that asks about it. */
async function factThenQuestion(bot: TestBot): Promise<string> {
  // Not the fact's words: a fact the prompt's notes already state is not sent twice.
  await bot.send('1', 'please remember where my sister lives');
  const [fact] = factIds(bot, '1');
  assert.ok(fact, 'the fact is saved');
  await bot.send('1', '/new');
  await bot.send('1', 'where does Marta live these days?');
  const prompt = JSON.stringify(bot.llm.chatRequests().at(-1)!.body.messages);
  assert.match(prompt, /# Relevant Memory[^"]*fact: Marta lives in Porto/, 'the fact reached the answer through # Relevant Memory');
  return fact.id;
}

test("/why replying to an answer lists the fact of an earlier conversation its prompt carried, with the fact's id; /why alone lists the last answer's", async () => {
  const bot = await startTestBot({ responder });
  try {
    const id = await factThenQuestion(bot);
    const answered = bot.sent.get('1')!.at(-1)!;
    await bot.send('1', 'thanks, that is all');
    const [reply] = await bot.send('1', '/why', { replyTo: answered });
    assert.match(reply!, new RegExp(`📌 fact ${id}: Marta lives in Porto`));
    assert.match(reply!, /\/why forget [0-9a-f]{8} <number>/, 'the terminal and test chats are told what to type');
    const [last] = await bot.send('1', '/why');
    assert.doesNotMatch(last!, /📌 fact/, "the last answer's own record: it used no fact");
    const [unknown] = await bot.send('1', '/why', { replyTo: 'bot-999' });
    assert.match(unknown!, /no record of that answer/);
    // Correcting the fact from the list: correct_fact's path, the old one kept as history.
    const turn = /turn ([0-9a-f]{8})/.exec(reply!)![1];
    const item = /(\d+)\. 📌 fact/.exec(reply!)![1];
    const [ask] = await bot.send('1', `/why correct ${turn} ${item}`);
    assert.match(ask!, new RegExp(`/why correct ${turn} ${item} <the right text>`));
    const [corrected] = await bot.send('1', `/why correct ${turn} ${item} Marta lives in Braga`);
    assert.match(corrected!, new RegExp(`Corrected: ${id} is kept as history`));
    assert.deepEqual(
      factIds(bot, '1').map((f) => f.content),
      ['Marta lives in Braga'],
    );
  } finally {
    await bot.close();
  }
});

test("/why lists what a memory tool returned in the answer's turn, with the fact's id", async () => {
  const bot = await startTestBot({ responder });
  try {
    await bot.send('1', 'please remember Marta lives in Porto');
    const [fact] = factIds(bot, '1');
    await bot.send('1', 'look up Marta');
    const [reply] = await bot.send('1', '/why');
    assert.match(reply!, new RegExp(`🔧 search_memory → ${fact!.id}: Marta lives in Porto`));
  } finally {
    await bot.close();
  }
});

test('risk: a forgotten word lives on in /why — after /forget the records hold no byte of it', async () => {
  const bot = await startTestBot({ responder });
  try {
    await factThenQuestion(bot);
    await bot.send('1', 'look up Marta');
    assert.ok((await filesContaining(path.join(bot.workspace, 'why'), 'Porto')).length > 0, 'recorded');
    await bot.send('1', '/forget Porto');
    await bot.send('1', '/forget confirm');
    assert.deepEqual(await filesContaining(path.join(bot.workspace, 'why'), 'Porto'), []);
    const [reply] = await bot.send('1', '/why');
    assert.doesNotMatch(reply!, /Porto/);
  } finally {
    await bot.close();
  }
});

test('in a group /why is for the owners and admins: a member is refused, and pressing a forget button as a member forgets nothing', async () => {
  const bot = await startTestBot({ responder });
  try {
    const group = { chat: { kind: 'group' as const, name: 'Family' } };
    await bot.send('-42', 'please remember Marta lives in Porto', group);
    await bot.send('-42', 'look up Marta', group);
    const member = { ...group, role: 'member' as const, userId: 'u-ann' };
    const [refused] = await bot.send('-42', '/why', member);
    assert.match(refused!, /Only the bot's owner can use \/why/);
    const [owner] = await bot.send('-42', '/why', group);
    const turn = /\/why forget ([0-9a-f]{8})/.exec(owner!)![1];
    const [pressed] = await bot.send('-42', `/why forget ${turn} 1`, member);
    assert.match(pressed!, /Only the bot's owner/);
    assert.equal(factIds(bot, '-42').length, 1, 'the fact is still kept');
  } finally {
    await bot.close();
  }
});
