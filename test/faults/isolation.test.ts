/**
 * Issue 7, "Isolation": with MEMORY_SCOPE at its default (chat), what one user tells the bot —
 * facts, notes, history, index rows — never reaches another chat's prompt, tool results or
 * /memory. The same probes run in chat A first as a control: they do find A's memories there,
 * so an empty result in B means isolation, not a broken probe. With MEMORY_SCOPE=global the
 * chats do share, which shows the isolation is the default's doing, not an accident.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../helpers/app.js';
import { lastUserText, memoryAwareResponder, promptKind, text, toolCalls, type RecordedRequest, type Responder, toolResults } from '../helpers/fake-llm.js';

const SECRET = 'zanzibar-42';
const A_FACTS = ['My name is Ottoline Featherstonehaugh.', 'My ferret is called Bramblewick.', `My secret word is ${SECRET}.`];
/** Words only chat A ever says. (B's probes name some of them as arguments; see `visibleText`.) */
const A_WORDS = ['zanzibar', 'Ottoline', 'Featherstonehaugh', 'Bramblewick'];
const REMEMBERED = `Ottoline's ferret Bramblewick knows the secret word ${SECRET}.`;
const PROBE_TRIGGER = 'probe memory';
const PROBE_TEXT = `${PROBE_TRIGGER}: what is my secret word, and what is my ferret called?`;

/** The tool calls the fake model makes in a probing turn (the same in A and in B). */
const PROBES = [
  { name: 'search_memory', args: { query: 'secret word ferret name' } },
  { name: 'search_memory', args: { query: SECRET } },
  { name: 'search_memory', args: { query: 'Bramblewick', kind: 'fact' } },
  { name: 'notes_search', args: { keyword: 'secret' } },
  { name: 'notes_search', args: { keyword: 'zanzibar' } },
  { name: 'notes_read', args: { file: 'HISTORY.md' } },
  { name: 'memory_read', args: {} },
  { name: 'get_entity_info', args: { name: 'Bramblewick' } },
  { name: 'memory_stats', args: {} },
  // A relative path that stays inside A's own folder but leaves B's.
  { name: 'notes_read', args: { file: '../test:alice/MEMORY.md' } },
];

/** A's remember_fact id, once known: B then tries to correct and confirm it. */
let aFactId = '';

/**
 * A cooperative model: consolidation copies the user's statements into memory, history and
 * facts (as a good model would); the "please remember" turn calls remember_fact and
 * memory_add; the probe turn calls every reading tool; everything else is echoed.
 */
const responder: Responder = (req, i) => {
  const kind = promptKind(req);
  if (kind === 'consolidation') {
    const base = JSON.parse((memoryAwareResponder(req, i) as { json: any }).json.choices[0].message.content);
    const prompt = String(req.body.messages[0].content);
    const said = prompt
      .slice(prompt.indexOf('## Conversation to Process'))
      .split('\n')
      .filter((l) => l.includes('] USER: '))
      .map((l) => l.slice(l.indexOf('] USER: ') + 8));
    return text(
      JSON.stringify({
        history_entry: `${base.history_entry} The user said: ${said.join(' ')}`,
        memory_update: [base.memory_update, ...said.map((s) => `- ${s}`)].join('\n'),
        facts: said,
      }),
    );
  }
  if (kind === 'summary') return memoryAwareResponder(req, i);
  if (req.body.messages.at(-1)?.role === 'tool') return text('done with tools');
  const user = lastUserText(req);
  if (user.startsWith('please remember')) {
    return toolCalls([
      { name: 'remember_fact', args: { fact: REMEMBERED } },
      { name: 'memory_add', args: { fact: REMEMBERED, section: 'Facts' } },
    ]);
  }
  if (user.startsWith(PROBE_TRIGGER)) return toolCalls(PROBES);
  if (user.startsWith('overwrite')) {
    return toolCalls([
      { name: 'correct_fact', args: { id: aFactId, new_content: 'The secret word is hijacked.' } },
      { name: 'confirm_fact', args: { id: aFactId } },
    ]);
  }
  return memoryAwareResponder(req, i);
};

/**
 * Everything in a request the model reads as information: the system prompt, user and
 * assistant text, tool results — minus the probe arguments the fake model itself chose
 * (echoed back in "Nothing found for …" lines).
 */
function visibleText(req: RecordedRequest): string {
  return withoutProbeArgs(req.body.messages.map((m: any) => (typeof m.content === 'string' ? m.content : '')).join('\n'));
}

function withoutProbeArgs(s: string): string {
  let out = s;
  for (const p of PROBES) for (const v of Object.values(p.args)) out = out.split(`"${v}"`).join('"<probe arg>"');
  return out;
}

const leaks = (s: string): string[] => A_WORDS.filter((w) => s.toLowerCase().includes(w.toLowerCase()));

async function filesUnder(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (e.isFile()) out.set(e.name, await readFile(path.join(dir, e.name), 'utf8'));
  }
  return out;
}

interface Run {
  bot: TestBot;
  aProbe: ReturnType<typeof toolResults>;
  bRequests: RecordedRequest[];
  bProbe: ReturnType<typeof toolResults>;
  bOverwrite: ReturnType<typeof toolResults>;
  bMemory: string;
}

/** Chat A tells its facts, remembers, compacts and probes; then chat B talks and probes. */
async function scenario(bot: TestBot): Promise<Run> {
  for (const f of A_FACTS) await bot.send('alice', f, { userId: 'u-alice', userName: 'Ottoline' });
  assert.deepEqual(await bot.send('alice', 'please remember this about my ferret', { userId: 'u-alice', userName: 'Ottoline' }), ['done with tools']);
  const saved = toolResults(bot.llm.chatRequests().at(-1)!).find((t) => t.name === 'remember_fact')!.content;
  aFactId = /Saved as (fact_[0-9a-f]+)\./.exec(saved)?.[1] ?? '';
  assert.ok(aFactId, `remember_fact saved A's fact: ${saved}`);
  const [compacted] = await bot.send('alice', '/compact 1', { userId: 'u-alice', userName: 'Ottoline' });
  assert.match(compacted!, /^Compacted: \d+ messages summarized, last \d+ kept\. Memory updated\./);
  assert.deepEqual(await bot.send('alice', PROBE_TEXT, { userId: 'u-alice', userName: 'Ottoline' }), ['done with tools']);
  const aProbe = toolResults(bot.llm.chatRequests().at(-1)!);

  const firstB = bot.llm.requests.length;
  await bot.send('bob', 'Hi, I am new here. I like sailing.', { userId: 'u-bob', userName: 'Bob' });
  await bot.send('bob', 'Do you know anything about me?', { userId: 'u-bob', userName: 'Bob' });
  assert.deepEqual(await bot.send('bob', PROBE_TEXT, { userId: 'u-bob', userName: 'Bob' }), ['done with tools']);
  const bProbe = toolResults(bot.llm.chatRequests().at(-1)!);
  assert.deepEqual(await bot.send('bob', 'overwrite what you know', { userId: 'u-bob', userName: 'Bob' }), ['done with tools']);
  const bOverwrite = toolResults(bot.llm.chatRequests().at(-1)!);
  const bRequests = bot.llm.requests.slice(firstB);
  const [bMemory] = await bot.send('bob', '/memory', { userId: 'u-bob', userName: 'Bob' });
  return { bot, aProbe, bRequests, bProbe, bOverwrite, bMemory: bMemory! };
}

test("risk: one user's facts, notes, history or index rows leak into another chat's prompt, tool results or /memory (MEMORY_SCOPE=chat)", async () => {
  const bot = await startTestBot({ responder });
  try {
    const r = await scenario(bot);

    // Control: A's memory holds the facts, and the very same probes find them in A.
    const aDir = path.join(bot.workspace, 'memory', 'test:alice');
    const aFiles = await filesUnder(aDir);
    assert.match(aFiles.get('MEMORY.md') ?? '', new RegExp(SECRET));
    assert.match(aFiles.get('MEMORY.md') ?? '', /Bramblewick/);
    assert.match(aFiles.get('HISTORY.md') ?? '', new RegExp(SECRET));
    const aFound = (name: string, i = 0) => r.aProbe.filter((p) => p.name === name)[i]!.content;
    assert.match(aFound('search_memory', 0), new RegExp(SECRET), 'control: search_memory finds the secret in A');
    assert.match(aFound('search_memory', 1), new RegExp(SECRET));
    assert.match(aFound('search_memory', 2), /fact: .*Bramblewick/);
    assert.match(aFound('notes_search', 0), new RegExp(SECRET));
    assert.match(aFound('notes_search', 1), new RegExp(SECRET));
    assert.match(aFound('notes_read'), new RegExp(SECRET));
    assert.match(aFound('memory_read'), new RegExp(SECRET));
    assert.match(aFound('get_entity_info'), /^Bramblewick/);
    assert.ok(JSON.parse(aFound('memory_stats')).byKind.fact >= 2, 'control: A has facts (remember_fact + consolidation)');
    // notes_read takes a note's or history file's name, never a path (nor MEMORY.md): refused in A too.
    assert.match(aFound('notes_read', 1), /^Error: refused/);
    assert.doesNotMatch(aFound('notes_read', 1), new RegExp(SECRET));

    // B: nothing of A in any request body the model got during B's turns.
    assert.ok(r.bRequests.length >= 4, `B made ${r.bRequests.length} requests`);
    for (const [i, req] of r.bRequests.entries()) {
      assert.deepEqual(leaks(visibleText(req)), [], `B's request #${i} (${promptKind(req)}) shows A's words`);
      // The secret, the surname and the ferret never appear anywhere in B's bodies except as the
      // arguments the fake model itself chose.
      const body = JSON.stringify(req.body.messages.filter((m: any) => m.role !== 'assistant' || !m.tool_calls));
      assert.ok(!body.includes('Featherstonehaugh') && !body.includes('Ottoline'), `B's request #${i}`);
    }
    // And B's probe results are specifically empty.
    const bGot = (name: string, i = 0) => r.bProbe.filter((p) => p.name === name)[i]!.content;
    assert.equal(r.bProbe.length, PROBES.length);
    assert.doesNotMatch(bGot('search_memory', 0), /fact:/, 'no fact of A in B search');
    assert.equal(bGot('search_memory', 1), 'Nothing found.');
    assert.equal(bGot('search_memory', 2), 'Nothing found.');
    assert.equal(bGot('notes_search', 1), 'Nothing found for "zanzibar".');
    assert.equal(bGot('notes_read'), 'No notes in HISTORY.md.');
    assert.match(bGot('notes_read', 1), /^Error: refused/, "B cannot read A's folder by a relative path");
    assert.equal(bGot('memory_read'), 'MEMORY.md is empty.');
    assert.equal(bGot('get_entity_info'), 'Nothing is known about "Bramblewick".');
    assert.equal(JSON.parse(bGot('memory_stats')).byKind.fact, undefined, 'B has no facts');

    // B cannot change A's facts by id either.
    assert.deepEqual(
      r.bOverwrite.map((t) => t.content),
      [`No active fact ${aFactId} found.`, `No active fact ${aFactId} found.`],
    );
    const db = bot.app.parts.index;
    assert.equal(db.getFact(aFactId, 'test:alice')?.valid, true, "A's fact is still active");
    assert.equal(db.search('hijacked', { scope: 'test:alice' }).length, 0);
    assert.equal(db.search('hijacked', { scope: 'test:bob' }).length, 0);

    // B's /memory shows nothing of A.
    assert.deepEqual(leaks(r.bMemory), [], r.bMemory);
    assert.match(r.bMemory, /Long-term memory is empty/);

    // The folders are separate, and nothing of A is in B's files or session.
    assert.deepEqual((await readdir(path.join(bot.workspace, 'memory'))).sort(), ['test:alice', 'test:bob']);
    const bFiles = await filesUnder(path.join(bot.workspace, 'memory', 'test:bob'));
    assert.ok(bFiles.size >= 1, 'B has its own notes');
    for (const [name, content] of bFiles) assert.deepEqual(leaks(content), [], `memory/test:bob/${name}`);
    // B's session: the texts of its messages (the probe calls' own arguments aside).
    const bSession = JSON.parse(await readFile(path.join(bot.workspace, 'sessions', 'test:bob.json'), 'utf8'));
    assert.deepEqual(leaks(withoutProbeArgs(bSession.messages.map((m: any) => m.content).join('\n'))), []);
  } finally {
    await bot.close();
  }
});

test('risk: the chat isolation is an accident of the test — with MEMORY_SCOPE=global the same chats DO share memory', async () => {
  const bot = await startTestBot({ responder, env: { MEMORY_SCOPE: 'global' } });
  try {
    const r = await scenario(bot);
    // One memory folder for the whole bot: MEMORY.md and HISTORY.md at its root.
    const root = await filesUnder(path.join(bot.workspace, 'memory'));
    assert.match(root.get('MEMORY.md') ?? '', new RegExp(SECRET));
    const bGot = (name: string, i = 0) => r.bProbe.filter((p) => p.name === name)[i]!.content;
    assert.match(bGot('memory_read'), new RegExp(SECRET), 'B reads the shared MEMORY.md');
    assert.match(bGot('search_memory', 1), new RegExp(SECRET), "B's search finds A's words");
    assert.match(bGot('notes_search', 1), new RegExp(SECRET));
    assert.match(bGot('get_entity_info'), /^Bramblewick/);
    // The shared memory is in B's system prompt too.
    const bChat = r.bRequests.filter((q) => promptKind(q) === 'chat');
    assert.match(String(bChat[0]!.body.messages[0].content), new RegExp(SECRET));
    assert.match(r.bMemory, new RegExp(SECRET));
  } finally {
    await bot.close();
  }
});
