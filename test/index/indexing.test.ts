/**
 * The index end to end through the daemon: Indexing 55 writes both sides of every exchange,
 * search_memory finds an old conversation after /new, # Relevant Memory brings it into the
 * system prompt of a later conversation, chats never see each other's memories, compaction's
 * consolidation saves facts, and the index tools work through real tool calls.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startTestBot, type TestBot } from '../helpers/app.js';
import { lastUserText, memoryAwareResponder, promptKind, text, toolCalls, type RecordedRequest, type Responder } from '../helpers/fake-llm.js';

interface EpisodeRow {
  id: string;
  kind: string;
  content: string;
  speaker: string | null;
  source_role: string | null;
  source_message_id: string | null;
  session_id: string | null;
  scope: string;
  event_time: number;
  valid_until: number | null;
  confidence: number;
  decay_rate: number;
  attributes: string;
}

function openDb(bot: TestBot): Database.Database {
  return new Database(path.join(bot.workspace, 'memory.db'), { readonly: true });
}

function rows(bot: TestBot, where = '1 = 1', ...params: unknown[]): EpisodeRow[] {
  const db = openDb(bot);
  try {
    return db.prepare(`SELECT * FROM memories WHERE ${where} ORDER BY rowid`).all(...params) as EpisodeRow[];
  } finally {
    db.close();
  }
}

async function conversationId(bot: TestBot, chat: string): Promise<string> {
  const file = JSON.parse(await readFile(path.join(bot.workspace, 'sessions', `test:${chat}.json`), 'utf8'));
  return file.metadata.conversationId as string;
}

const systemPrompt = (req: RecordedRequest): string => String(req.body.messages[0].content);
const lastMessage = (req: RecordedRequest) => req.body.messages.at(-1) as { role: string; content: string };
/** `# Relevant Memory` travels as a system message just before the newest user message. */
const relevantMemory = (req: RecordedRequest): string => {
  const msgs = req.body.messages as Array<{ role: string; content: string }>;
  const at = msgs.findLastIndex((m) => m.role === 'user');
  const before = msgs[at - 1];
  assert.ok(!systemPrompt(req).includes('# Relevant Memory'), 'not in the system prompt');
  return before?.role === 'system' && at > 1 && before.content.startsWith('# Relevant Memory') ? before.content : '';
};
const wholeRequest = (req: RecordedRequest): string => JSON.stringify(req.body.messages);

/**
 * Chat: "CALL <tool> <json args>" makes the model call that tool; after a tool result it answers
 * "tool said: <result>"; anything else is echoed. Consolidation and summary prompts are
 * answered like memoryAwareResponder, plus `facts` when given.
 */
function scripted(facts: string[] = []): Responder {
  return (req, i) => {
    const kind = promptKind(req);
    if (kind === 'consolidation') {
      const base = memoryAwareResponder(req, i) as { json: any };
      const body = JSON.parse(base.json.choices[0].message.content);
      return text(JSON.stringify({ ...body, facts }));
    }
    if (kind === 'summary') return memoryAwareResponder(req, i);
    const last = lastMessage(req);
    if (last.role === 'tool') return text(`tool said: ${last.content}`);
    const m = /^CALL (\w+) (.*)$/s.exec(lastUserText(req));
    if (m) return toolCalls([{ name: m[1]!, args: JSON.parse(m[2]!) }]);
    return text(`echo: ${lastUserText(req)}`);
  };
}

const call = (bot: TestBot, chat: string, tool: string, args: unknown) => bot.send(chat, `CALL ${tool} ${JSON.stringify(args)}`).then((r) => r.join('\n'));

test('each exchange becomes two episode rows: who said it, which conversation, which chat, which message; entities linked', async () => {
  const bot = await startTestBot();
  try {
    const before = Math.floor(Date.now() / 1000);
    assert.deepEqual(await bot.send('42', 'I met Dana in Lisbon, write to dana@example.com', { userName: 'Ann', messageId: '9001' }), [
      'echo: I met Dana in Lisbon, write to dana@example.com',
    ]);
    const conv = await conversationId(bot, '42');
    assert.equal(bot.llm.requests.length, 1, 'indexing made no LLM or embeddings call of its own');
    const eps = rows(bot, "kind = 'episode'");
    assert.equal(eps.length, 2);
    const [user, assistant] = eps as [EpisodeRow, EpisodeRow];
    assert.equal(user.content, 'I met Dana in Lisbon, write to dana@example.com');
    assert.equal(user.speaker, 'Ann');
    assert.equal(user.source_role, 'user');
    assert.equal(user.source_message_id, '9001');
    assert.equal(user.session_id, conv);
    assert.equal(user.scope, 'test:42');
    assert.ok(user.event_time >= before - 1 && user.event_time <= Math.floor(Date.now() / 1000) + 1);
    assert.equal(assistant.content, 'echo: I met Dana in Lisbon, write to dana@example.com');
    assert.equal(assistant.source_role, 'assistant');
    assert.equal(assistant.session_id, conv);
    assert.equal(assistant.scope, 'test:42');
    const session = JSON.parse(await readFile(path.join(bot.workspace, 'sessions', 'test:42.json'), 'utf8'));
    assert.equal(assistant.source_message_id, session.messages.at(-1).id, 'the reply points at its session message');

    const db = openDb(bot);
    try {
      const linked = (
        db
          .prepare('SELECT e.canonical_name AS name FROM memory_entities me JOIN entities e ON e.id = me.entity_id WHERE me.memory_id = ?')
          .all(user.id) as Array<{ name: string }>
      ).map((r) => r.name);
      assert.deepEqual(linked.sort(), ['Dana', 'Lisbon', 'dana@example.com']);
      // FTS is in step with the table.
      const fts = db.prepare("SELECT COUNT(*) AS n FROM memories_fts WHERE memories_fts MATCH 'lisbon'").get() as { n: number };
      assert.equal(fts.n, 2);
    } finally {
      db.close();
    }
    // A command is not a conversation turn: nothing indexed.
    await bot.send('42', '/status');
    assert.equal(rows(bot, "kind = 'episode'").length, 2);
  } finally {
    await bot.close();
  }
});

test('a fact said in one conversation is found by search_memory after /new', async () => {
  const bot = await startTestBot({ responder: scripted() });
  try {
    await bot.send('1', 'By the way, my cat is called Miso and she is three');
    const first = await conversationId(bot, '1');
    assert.equal(await bot.send('1', '/new').then((r) => r[0]), 'Session cleared.');
    const second = await conversationId(bot, '1');
    assert.notEqual(second, first);

    const reply = await call(bot, '1', 'search_memory', { query: 'what is my cat called' });
    const chats = bot.llm.chatRequests().filter((r) => promptKind(r) === 'chat');
    const afterTool = chats.at(-1)!;
    const toolMsg = afterTool.body.messages.find((m: any) => m.role === 'tool');
    assert.ok(toolMsg, 'the tool result went back to the model');
    assert.match(toolMsg.content, /my cat is called Miso/);
    assert.match(toolMsg.content, /\(Tester\)/, 'with the speaker');
    assert.match(reply, /my cat is called Miso/);
    // The old conversation's rows, the new one's user message.
    const miso = rows(bot, "content LIKE '%cat is called Miso%' AND source_role = 'user'");
    assert.equal(miso[0]!.session_id, first);
  } finally {
    await bot.close();
  }
});

test('# Relevant Memory in a later conversation has the old message, not the current conversation; another chat never sees it', async () => {
  const bot = await startTestBot({ responder: scripted() });
  try {
    // Ten days ago: past Recent Context (7 days), so only the index has it (# Relevant Memory
    // leaves out what a note line of # Memory already shows).
    await bot.send('1', 'My cat is called Miso and she loves tuna', { receivedAt: new Date(Date.now() - 10 * 86_400_000) });
    await bot.send('1', '/new');
    await bot.send('1', 'Should I buy my cat a new toy?');
    let req = bot.llm
      .chatRequests()
      .filter((r) => promptKind(r) === 'chat')
      .at(-1)!;
    let rm = relevantMemory(req);
    assert.match(rm, /^# Relevant Memory/);
    assert.match(rm, /Tester said: My cat is called Miso and she loves tuna/);

    await bot.send('1', 'Which toy would my cat like best?');
    req = bot.llm
      .chatRequests()
      .filter((r) => promptKind(r) === 'chat')
      .at(-1)!;
    rm = relevantMemory(req);
    assert.match(rm, /My cat is called Miso/);
    assert.doesNotMatch(rm, /buy my cat a new toy/, 'the current conversation is in the messages already, not in # Relevant Memory');

    // Another chat: neither the prompt section nor the tool.
    await bot.send('2', 'What is my cat called? Is it Miso?');
    req = bot.llm
      .chatRequests()
      .filter((r) => promptKind(r) === 'chat')
      .at(-1)!;
    assert.doesNotMatch(wholeRequest(req), /tuna/);
    const reply = await call(bot, '2', 'search_memory', { query: 'cat Miso tuna' });
    assert.doesNotMatch(reply, /tuna/);
    const toolMsg = bot.llm
      .chatRequests()
      .at(-1)!
      .body.messages.find((m: any) => m.role === 'tool');
    assert.doesNotMatch(toolMsg.content, /tuna/);
    assert.doesNotMatch(relevantMemory(bot.llm.chatRequests().at(-1)!), /tuna/);

    // The latest weekly reflection of the chat comes along, and only in that chat.
    bot.app.parts.index.saveReflection('This week the user cared most about the cat.', 'test:1', []);
    await bot.send('1', 'Good morning');
    assert.match(relevantMemory(bot.llm.chatRequests().at(-1)!), /Weekly insight: This week the user cared most about the cat\./);
    await bot.send('2', 'Good morning');
    assert.doesNotMatch(wholeRequest(bot.llm.chatRequests().at(-1)!), /Weekly insight/);
  } finally {
    await bot.close();
  }
});

test("facts returned by the consolidation during compaction are saved as fact rows in the chat's scope", async () => {
  const bot = await startTestBot({ responder: scripted(['The user has a dog named Rex', 'The user lives in Porto']) });
  try {
    for (const m of ['My dog Rex is a beagle', 'We live in Porto now', 'Rex loves the beach', 'See you']) await bot.send('7', m);
    const conv = await conversationId(bot, '7');
    const reply = (await bot.send('7', '/compact 2'))[0]!;
    assert.match(reply, /^Compacted/);
    const facts = rows(bot, "kind = 'fact'");
    assert.deepEqual(
      facts.map((f) => [f.content, f.scope, f.session_id]),
      [
        ['The user has a dog named Rex', 'test:7', conv],
        ['The user lives in Porto', 'test:7', conv],
      ],
    );
    // Found by the fact filter of search_memory, only in this chat.
    const found = await call(bot, '7', 'search_memory', { query: 'dog name', kind: 'fact' });
    assert.match(found, /fact: The user has a dog named Rex/);
    const elsewhere = await call(bot, '8', 'search_memory', { query: 'dog name', kind: 'fact' });
    assert.match(elsewhere, /Nothing found/);
    // /new consolidates too: its facts are saved, the earlier ones not twice.
    await bot.send('7', 'Rex turned five today');
    await bot.send('7', '/new');
    assert.equal(rows(bot, "kind = 'fact'").length, 2, 'the same facts again are duplicates, not new rows');
  } finally {
    await bot.close();
  }
});

test('remember_fact, correct_fact, confirm_fact, memory_stats and get_entity_info through tool calls; ids of another chat are refused', async () => {
  const bot = await startTestBot({ responder: scripted() });
  try {
    const saved = await call(bot, 'A', 'remember_fact', { fact: "The user's sister Dana lives in Lisbon" });
    const id = /Saved as (fact_[0-9a-f]+)\./.exec(saved)?.[1];
    assert.ok(id, saved);
    assert.match(await call(bot, 'A', 'remember_fact', { fact: "The user's sister Dana lives in Lisbon" }), new RegExp(`Already known as ${id}`));

    const stats = JSON.parse((await call(bot, 'A', 'memory_stats', {})).replace(/^tool said: /, ''));
    assert.equal(stats.byKind.fact, 1);
    assert.ok(stats.byKind.episode >= 4);
    assert.match(stats.latest, /^\d{4}-\d{2}-\d{2}T/);

    const info = await call(bot, 'A', 'get_entity_info', { name: 'dana' });
    assert.match(info, /^tool said: Dana \(/);
    assert.match(info, new RegExp(`\\[${id}\\].*fact: The user's sister Dana lives in Lisbon`));

    // Chat B: the id is not found, and B's stats and entities know nothing of A.
    assert.match(await call(bot, 'B', 'confirm_fact', { id }), new RegExp(`No active fact ${id}`));
    assert.match(await call(bot, 'B', 'correct_fact', { id, new_content: 'The user has no sister' }), new RegExp(`No active fact ${id}`));
    const statsB = JSON.parse((await call(bot, 'B', 'memory_stats', {})).replace(/^tool said: /, ''));
    assert.equal(statsB.byKind.fact, undefined);
    assert.match(await call(bot, 'B', 'get_entity_info', { name: 'Lisbon' }), /Nothing is known about "Lisbon"/);
    let fact = rows(bot, 'id = ?', id)[0]!;
    assert.equal(fact.valid_until, null);
    assert.equal(fact.decay_rate, 0.1);
    assert.equal(rows(bot, "kind = 'fact'").length, 1, 'B created nothing');

    assert.match(await call(bot, 'A', 'confirm_fact', { id }), new RegExp(`Confirmed ${id}`));
    fact = rows(bot, 'id = ?', id)[0]!;
    assert.equal(fact.decay_rate, 0);
    assert.equal(fact.confidence, 1);

    const corrected = await call(bot, 'A', 'correct_fact', { id, new_content: "The user's sister Dana moved to Porto" });
    const newId = new RegExp(`Corrected: ${id} retired, (fact_[0-9a-f]+) saved\\.`).exec(corrected)?.[1];
    assert.ok(newId, corrected);
    assert.equal(typeof rows(bot, 'id = ?', id)[0]!.valid_until, 'number', 'retired, kept for history');
    assert.deepEqual(JSON.parse(rows(bot, 'id = ?', newId)[0]!.attributes).supersedes, [id]);
    assert.match(await call(bot, 'A', 'confirm_fact', { id }), /No active fact/, 'a retired fact cannot be confirmed');
    const found = await call(bot, 'A', 'search_memory', { query: 'where does Dana live', kind: 'fact' });
    assert.match(found, /moved to Porto/);
    assert.doesNotMatch(found, /lives in Lisbon/);

    // A malformed id never reaches the index.
    assert.doesNotMatch(await call(bot, 'A', 'confirm_fact', { id: 'ep_123; DROP TABLE memories' }), /Confirmed/);
    assert.ok(rows(bot).length > 0);
  } finally {
    await bot.close();
  }
});
