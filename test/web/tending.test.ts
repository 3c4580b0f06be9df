/**
 * The memory page's token chart and fact correction over HTTP, against a real daemon (createApp,
 * real workspace/usage.db and memory.db): the chart's data is the chat's own usage rows per day,
 * a corrected fact retires the old one and changes what search_memory's search returns, and the
 * new route is guarded like every change (token, same origin).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { TOKEN, startPageBot } from './helpers.js';
import { SqliteUsageStore } from '../../src/features/usage/sqlite-usage.js';
import { USAGE_DAYS } from '../../src/web/data.js';
import { makeMessage } from '../../src/sessions/model.js';
import { SUMMARY_PREFIX } from '../../src/memory/compaction.js';

const auth = { authorization: `Bearer ${TOKEN}` };
const DAY = 86_400_000;

test("memory page: /api/usage gives the chat's tokens per day from usage.db — answers vs background, cached part — for the last 30 days only", async () => {
  const t = await startPageBot();
  try {
    const s = t.bot.app.parts;
    // Another connection to the same usage.db file, as a second process would have.
    const store = new SqliteUsageStore(path.join(t.bot.workspace, 'usage.db'), t.bot.config.timezone);
    const threeDaysAgo = new Date(Date.now() - 3 * DAY);
    store.record({ chat: 'test:1', kind: 'summary' }, { promptTokens: 1000, cachedTokens: 400, completionTokens: 200 }, threeDaysAgo);
    store.record({ chat: 'test:1', kind: 'answer' }, { promptTokens: 500, cachedTokens: 100, completionTokens: 50 }, threeDaysAgo);
    store.record({ chat: 'test:1', kind: 'answer' }, { promptTokens: 500, cachedTokens: 100, completionTokens: 50 }, threeDaysAgo);
    store.record({ chat: 'test:1', kind: 'answer' }, { promptTokens: 999_000, cachedTokens: 0, completionTokens: 0 }, new Date(Date.now() - 40 * DAY));
    store.record({ chat: 'test:2', kind: 'answer' }, { promptTokens: 7777, cachedTokens: 0, completionTokens: 0 }, threeDaysAgo);
    await store.close();

    assert.equal((await fetch(`${t.page.url}api/usage?chat=test:1`)).status, 401, 'token required');
    assert.equal((await fetch(`${t.page.url}api/usage?chat=${encodeURIComponent('../test:1')}`, { headers: auth })).status, 404);

    const u = (await (await fetch(`${t.page.url}api/usage?chat=test:1`, { headers: auth })).json()) as {
      since: string;
      until: string;
      days: Array<{ day: string; answers: number; background: number; promptTokens: number; cachedTokens: number; calls: number }>;
    };
    const today = s.usage.dayOf();
    assert.equal(u.until, today);
    assert.equal(u.days.length, USAGE_DAYS, 'one entry per day, empty days included');
    assert.equal(u.days[0]!.day, u.since);
    assert.equal(u.days.at(-1)!.day, today);
    assert.deepEqual(
      u.days.find((d) => d.day === s.usage.dayOf(threeDaysAgo)),
      {
        day: s.usage.dayOf(threeDaysAgo),
        answers: 1100,
        background: 1200,
        promptTokens: 2000,
        cachedTokens: 600,
        calls: 3,
      },
    );
    // Today: the two answers the bot gave in the helper's chat, as /status counts them.
    const todayRow = u.days.at(-1)!;
    const status = await s.usage.day('test:1');
    assert.ok(status.answers.total > 0, "the bot's own answers were recorded");
    assert.equal(todayRow.answers, status.answers.total);
    assert.equal(todayRow.background, status.background.total);
    const all = u.days.reduce((n, d) => n + d.answers + d.background, 0);
    assert.equal(all, 2300 + status.all.total, 'nothing of chat two, nothing older than the window');
  } finally {
    await t.close();
  }
});

test("memory page: correcting a fact retires it, saves the owner's text in its place, and search finds the new text instead of the old", async () => {
  const t = await startPageBot();
  const origin = t.page.url.slice(0, -1);
  const post = (p: string, body: unknown, headers: Record<string, string> = { origin }) =>
    fetch(`${t.page.url}api/${p}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const search = async (q: string) =>
    (
      (await (await fetch(`${t.page.url}api/search?chat=test:1&q=${encodeURIComponent(q)}`, { headers: auth })).json()) as {
        results: Array<{ id: string; content: string }>;
      }
    ).results;
  const facts = async () =>
    (
      (await (await fetch(`${t.page.url}api/chat?chat=test:1`, { headers: auth })).json()) as {
        facts: Array<{ id: string; content: string; retired: string | null }>;
      }
    ).facts;
  try {
    const s = t.bot.app.parts;
    const [old] = s.index.saveFacts([{ content: "Ada's queen bee is called Beatrix", scope: 'test:1', sessionId: 'conv_x', sourceIds: [] }]);
    assert.ok(
      (await search('queen bee name')).some((r) => r.id === old!.id),
      'the old fact is found before',
    );

    // Guarded like every change: a foreign or missing Origin is refused and changes nothing.
    const forged = await post('fact/correct', { chat: 'test:1', id: old!.id, content: "Ada's queen bee is called Mallory" }, { origin: 'http://evil.example' });
    assert.equal(forged.status, 403);
    assert.equal((await post('fact/correct', { chat: 'test:1', id: old!.id, content: 'x y z' }, {})).status, 403, 'no Origin at all');
    assert.equal(
      (await fetch(`${t.page.url}api/fact/correct`, { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: '{}' })).status,
      401,
      'no token',
    );
    assert.equal(
      (await post('fact/correct', { chat: 'test:2', id: old!.id, content: "Ada's queen bee is called Mallory" })).status,
      404,
      "another chat's fact is not found",
    );
    assert.equal((await post('fact/correct', { chat: 'test:1', id: old!.id, content: ' a ' })).status, 400, 'too short');
    assert.deepEqual(s.index.getFact(old!.id, 'test:1')?.valid, true, 'still active after the refusals');

    const res = await post('fact/correct', { chat: 'test:1', id: old!.id, content: "  Ada's queen bee is called Matilda, not Beatrix  " });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { corrected: string; id: string };
    assert.equal(body.corrected, old!.id);
    assert.notEqual(body.id, old!.id);

    const after = await search('queen bee name');
    assert.ok(
      after.some((r) => r.id === body.id && r.content === "Ada's queen bee is called Matilda, not Beatrix"),
      JSON.stringify(after),
    );
    assert.ok(!after.some((r) => r.id === old!.id), 'the retired fact is no longer a hit');
    assert.equal(s.index.getFact(old!.id, 'test:1')?.valid, false);

    const shown = await facts();
    assert.equal(shown.find((f) => f.id === body.id)?.retired, null);
    assert.ok(shown.find((f) => f.id === old!.id)?.retired, 'the old fact is listed as retired');
    assert.equal(
      (await post('fact/correct', { chat: 'test:1', id: old!.id, content: 'Ada has no bees' })).status,
      404,
      'a retired fact cannot be corrected twice',
    );
  } finally {
    await t.close();
  }
});

test("memory page: a chat shows its history entries, entities with their memories, and the session's [Conversation summary] marked", async () => {
  const t = await startPageBot();
  try {
    const s = t.bot.app.parts;
    // The consolidation's and the compaction's own writers.
    await s.memory.forChat('test', '1').appendHistory('Ada told the bot about her <b>honey</b> stall.');
    const session = await s.sessions.getOrCreate('test', '1');
    const summary = makeMessage('system', `${SUMMARY_PREFIX}\nAda sells honey at the Saturday market.`);
    await s.sessions.writer(session).replace([summary, ...session.messages.slice(-2)]);
    s.index.saveFacts([{ content: 'Ada sells honey at the Saturday market in Lisbon', scope: 'test:1', sessionId: 'conv_x', sourceIds: [] }]);

    const d = (await (await fetch(`${t.page.url}api/chat?chat=test:1`, { headers: auth })).json()) as any;
    assert.equal(d.history.length, 1);
    assert.equal(d.history[0].text, 'Ada told the bot about her <b>honey</b> stall.');
    assert.match(d.history[0].at, /^\d{4}-\d\d-\d\dT/);
    const lisbon = d.entities.find((e: any) => /lisbon/i.test(e.name));
    assert.ok(lisbon, JSON.stringify(d.entities));
    assert.ok(lisbon.memories.includes('Ada sells honey at the Saturday market in Lisbon'), JSON.stringify(lisbon));
    assert.deepEqual(
      d.session.map((m: any) => m.summary),
      [true, false, false],
      'the summary first and marked, the kept tail after it',
    );
    assert.match(d.session[0].content, /Saturday market/);
  } finally {
    await t.close();
  }
});
