/**
 * Facts change (issue 37): "Marta lives in Porto", said and kept as a fact, then corrected to
 * Braga — on the memory page, or by the model's correct_fact — through the real daemon
 * (createApp, fake LLM, real memory files and memory.db). After the correction the next prompt
 * never shows Porto as current (today's note line still holds it, marked with Braga), search
 * gives Braga first for "where does Marta live", "where did Marta live before" still finds
 * Porto, and the page shows the fact's history with its dates.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../helpers/app.js';
import { lastUserText, memoryAwareResponder, promptKind, text, toolCalls, type Responder } from '../helpers/fake-llm.js';
import { startMemoryPage, type MemoryPage } from '../../src/web/server.js';
import { TOKEN, pageDeps } from './helpers.js';

const auth = { authorization: `Bearer ${TOKEN}` };
const SCOPE = 'test:1';

interface Hit {
  id: string;
  content: string;
  correctedBy?: { id: string; content: string; date: string };
}

async function start(responder: Responder): Promise<{ bot: TestBot; page: MemoryPage; close(): Promise<void> }> {
  const bot = await startTestBot({ responder });
  const page = await startMemoryPage(pageDeps(bot), bot.logs.log, { token: TOKEN, host: '127.0.0.1', port: 0 });
  return {
    bot,
    page,
    async close() {
      await page.close();
      await bot.close();
    },
  };
}

/** Marta's city said in one conversation and kept as a fact (as remember_fact keeps it); then a new conversation. */
async function martaInPorto(bot: TestBot): Promise<string> {
  await bot.send('1', 'My sister Marta lives in Porto');
  const [fact] = bot.app.parts.index.saveFacts([{ content: 'Marta lives in Porto', scope: SCOPE, sourceIds: [] }]);
  assert.ok(fact && !fact.duplicateOf);
  // The Porto exchange leaves the conversation: from now on it reaches the prompt as today's note line.
  await bot.send('1', '/new');
  return fact.id;
}

/** What a user of the page and the next turn see once Braga replaced Porto. */
async function assertBragaIsCurrent(t: { bot: TestBot; page: MemoryPage }, portoId: string): Promise<void> {
  const { bot, page } = t;
  await bot.send('1', 'Where does Marta live these days?');
  const req = bot.llm
    .chatRequests()
    .filter((r) => promptKind(r) === 'chat')
    .at(-1)!;
  assert.equal(lastUserText(req), 'Where does Marta live these days?');
  const prompt = (req.body.messages as Array<{ content: unknown }>).map((m) => String(m.content ?? '')).join('\n');
  assert.match(prompt, /Braga/, 'the current value is in the prompt');
  const portoLines = prompt.split('\n').filter((l) => /Porto/.test(l));
  assert.ok(portoLines.length > 0, "today's note line of the Porto message is still there");
  for (const line of portoLines) assert.match(line, /later corrected, \d{4}-\d\d-\d\d: Marta lives in Braga/, `shown as current: ${line}`);

  const search = async (q: string) =>
    ((await (await fetch(`${page.url}api/search?chat=${SCOPE}&q=${encodeURIComponent(q)}`, { headers: auth })).json()) as { results: Hit[] }).results;
  const now = await search('where does Marta live');
  const first = now.find((h) => /Porto|Braga/.test(h.content));
  assert.match(first?.content ?? '', /Braga/, `the current value first: ${JSON.stringify(now)}`);
  for (const h of now.filter((x) => /Porto/.test(x.content) && !/Braga/.test(x.content)))
    assert.match(h.correctedBy?.content ?? '', /Braga/, JSON.stringify(h));

  const before = await search('where did Marta live before');
  const porto = before.find((h) => /Porto/.test(h.content));
  assert.ok(porto, `the old value is still found: ${JSON.stringify(before)}`);
  assert.match(porto.correctedBy?.content ?? '', /Braga/, 'and said to be corrected');
  assert.ok(
    before.some((h) => h.id === portoId),
    'the retired fact itself is found for a question about before',
  );

  const facts = ((await (await fetch(`${page.url}api/chat?chat=${SCOPE}`, { headers: auth })).json()) as { facts: any[] }).facts;
  const braga = facts.find((f) => f.content === 'Marta lives in Braga' && !f.retired);
  assert.ok(braga, JSON.stringify(facts));
  assert.equal(braga.history.length, 1, JSON.stringify(braga));
  assert.equal(braga.history[0].content, 'Marta lives in Porto');
  assert.match(braga.history[0].date, /^\d{4}-\d\d-\d\dT/);
  assert.match(braga.history[0].corrected, /^\d{4}-\d\d-\d\dT/);
  const old = facts.find((f) => f.id === portoId);
  assert.ok(old.retired);
  assert.deepEqual(old.replacedBy, { id: braga.id, content: 'Marta lives in Braga' });
}

test('risk: a fact corrected on the memory page lives on as current in the next prompt and in search — Braga replaces Porto, Porto stays as history', async () => {
  const t = await start(memoryAwareResponder);
  try {
    const portoId = await martaInPorto(t.bot);
    const res = await fetch(`${t.page.url}api/fact/correct`, {
      method: 'POST',
      headers: { ...auth, origin: t.page.url.slice(0, -1), 'content-type': 'application/json' },
      body: JSON.stringify({ chat: SCOPE, id: portoId, content: 'Marta lives in Braga' }),
    });
    assert.equal(res.status, 200);
    await assertBragaIsCurrent(t, portoId);
  } finally {
    await t.close();
  }
});

test('risk: a fact the model corrects with correct_fact when the user says so lives on as current — the same as a correction on the page', async () => {
  let portoId = '';
  const responder: Responder = (req, i) => {
    if (promptKind(req) === 'chat' && lastUserText(req) === 'Marta moved, she is in Braga now') {
      const done = (req.body.messages as Array<{ role: string }>).at(-1)!.role === 'tool';
      return done ? text('Updated: Marta lives in Braga.') : toolCalls([{ name: 'correct_fact', args: { id: portoId, new_content: 'Marta lives in Braga' } }]);
    }
    return memoryAwareResponder(req, i);
  };
  const t = await start(responder);
  try {
    portoId = await martaInPorto(t.bot);
    assert.deepEqual(await t.bot.send('1', 'Marta moved, she is in Braga now'), ['Updated: Marta lives in Braga.']);
    // The correction's own exchange starts a conversation of its own, as a later day would.
    await t.bot.send('1', '/new');
    await assertBragaIsCurrent(t, portoId);
  } finally {
    await t.close();
  }
});

test('risk: a correction undone by the consolidation of a conversation older than it — Porto, re-read from the messages at /new, is not saved again as a fact', async () => {
  const responder: Responder = (req, i) => {
    if (promptKind(req) !== 'consolidation') return memoryAwareResponder(req, i);
    return text(JSON.stringify({ history_entry: '[2026-01-01 00:00] Marta.', memory_update: '', facts: ['Marta lives in Porto', 'Marta likes green tea'] }));
  };
  const t = await start(responder);
  try {
    await t.bot.send('1', 'My sister Marta lives in Porto');
    const [porto] = t.bot.app.parts.index.saveFacts([{ content: 'Marta lives in Porto', scope: SCOPE, sourceIds: [] }]);
    // Corrected on the page while the conversation that said Porto is still open.
    const res = await fetch(`${t.page.url}api/fact/correct`, {
      method: 'POST',
      headers: { ...auth, origin: t.page.url.slice(0, -1), 'content-type': 'application/json' },
      body: JSON.stringify({ chat: SCOPE, id: porto!.id, content: 'Marta lives in Braga' }),
    });
    assert.equal(res.status, 200);
    await t.bot.send('1', '/new');
    const facts = ((await (await fetch(`${t.page.url}api/chat?chat=${SCOPE}`, { headers: auth })).json()) as { facts: any[] }).facts;
    const live = facts.filter((f) => !f.retired).map((f) => [f.content, f.confidence]);
    assert.deepEqual(
      live.sort(),
      [
        ['Marta likes green tea', 1],
        ['Marta lives in Braga', 1],
      ],
      'the other fact of the conversation is kept; Braga is still the one, at full confidence',
    );
    await assertBragaIsCurrent(t, porto!.id);
  } finally {
    await t.close();
  }
});

test("risk: MEMORY.md and an earlier day's notes still say Porto after the correction — the prompt shows those lines marked with Braga, the files keep every byte", async () => {
  const t = await start(memoryAwareResponder);
  try {
    const dir = path.join(t.bot.workspace, 'memory', SCOPE);
    const memory = '## People\n- Marta (sister) lives in Porto.\n- Marta likes green tea.\n';
    const day = '[09:00] User: Marta lives in Porto now | Assistant: Nice city!\n[09:05] User: I visited Porto once | Assistant: Fun.\n';
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'MEMORY.md'), memory);
    await writeFile(path.join(dir, '2026-03-09.md'), day);
    const idx = t.bot.app.parts.index;
    const [porto] = idx.saveFacts([{ content: 'Marta lives in Porto', scope: SCOPE, sourceIds: [] }]);
    assert.ok(idx.correctFact(porto!.id, SCOPE, 'Marta lives in Braga'));
    await t.bot.send('1', 'hello there', { receivedAt: new Date('2026-03-10T12:00:00Z') });
    const system = String(t.bot.llm.chatRequests().at(-1)!.body.messages[0].content);
    const lines = system.split('\n');
    assert.match(
      lines.find((l) => l.startsWith('- Marta (sister)')) ?? '',
      /^- Marta \(sister\) lives in Porto\. \(later corrected, \d{4}-\d\d-\d\d: Marta lives in Braga\)$/,
    );
    assert.ok(lines.includes('- Marta likes green tea.'), 'another line of MEMORY.md is left as it is');
    assert.match(lines.find((l) => l.startsWith('[09:00]')) ?? '', /Nice city! \(later corrected, .*: Marta lives in Braga\)$/);
    assert.ok(lines.includes('[09:05] User: I visited Porto once | Assistant: Fun.'), 'a line that only names the city is left as it is');
    assert.equal(await readFile(path.join(dir, 'MEMORY.md'), 'utf8'), memory);
    assert.equal(await readFile(path.join(dir, '2026-03-09.md'), 'utf8'), day);
  } finally {
    await t.close();
  }
});
