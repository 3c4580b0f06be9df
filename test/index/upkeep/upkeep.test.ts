/**
 * The nightly upkeep jobs, run on demand: Ebbinghaus decay with soft delete below 0.05,
 * consolidation of sessions the user has left, the weekly reflection, and enrichment (skipped
 * without an accurate NER). Every job is idempotent and every run is recorded in job_runs.
 * Also `npm run memory -- run-job …` twice in a row from the command line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteMemoryIndex } from '../../../src/index/sqlite-memory-index.js';
import { Upkeep, JOB_NAMES } from '../../../src/index/upkeep/upkeep.js';
import { LlmClient } from '../../../src/llm/client.js';
import { componentLogger, silentLogger } from '../../../src/core/log.js';
import { startFakeLlm, text, lastUserText, type FakeLlm, type Responder } from '../../helpers/fake-llm.js';
import { captureLog, tempDir, testConfig } from '../../helpers/workspace.js';
import { Scheduler } from '../../../src/app/jobs.js';
import { memoryCli } from '../../helpers/child.js';

const DAY = 86_400;
const NOW = new Date('2026-03-10T04:00:00Z');
const nowSec = Math.floor(NOW.getTime() / 1000);

interface Row {
  id: string;
  content: string;
  confidence: number;
  decay_rate: number;
  valid_until: number | null;
  scope: string;
  session_id: string | null;
  source_ids: string;
  tags: string;
}

async function setup(responder?: Responder, file = ':memory:') {
  const llm = await startFakeLlm(responder);
  const logs = captureLog();
  const index = new SqliteMemoryIndex(file, silentLogger());
  const client = new LlmClient(testConfig({ OPENAI_BASE_URL: llm.url }), silentLogger());
  const upkeep = new Upkeep(index, client, componentLogger(logs.log, 'Upkeep'));
  const db = index.database!;
  const row = (id: string) => db.prepare('SELECT * FROM memories WHERE id = ?').get(id) as Row;
  const facts = () => db.prepare("SELECT * FROM memories WHERE kind = 'fact' ORDER BY rowid").all() as Row[];
  const jobRuns = () => db.prepare('SELECT job, started_at, finished_at, outcome, detail FROM job_runs ORDER BY rowid').all() as Array<Record<string, any>>;
  return {
    llm,
    logs,
    index,
    upkeep,
    db,
    row,
    facts,
    jobRuns,
    async close() {
      index.close();
      await llm.close();
    },
  };
}

/** A fact last used `daysAgo` days before NOW. */
function fact(index: SqliteMemoryIndex, content: string, daysAgo: number, opts: { confidence?: number; scope?: string } = {}): string {
  const [f] = index.saveFacts([{ content, scope: opts.scope ?? 'test:1', ...(opts.confidence !== undefined ? { confidence: opts.confidence } : {}) }]);
  index.database!.prepare('UPDATE memories SET last_accessed = ?, created_at = ? WHERE id = ?').run(nowSec - daysAgo * DAY, nowSec - 60 * DAY, f!.id);
  return f!.id;
}

function episodes(index: SqliteMemoryIndex, sessionId: string, scope: string, at: Date, lines: string[]): void {
  lines.forEach((content, i) =>
    index.saveEpisode({
      content,
      role: i % 2 === 0 ? 'user' : 'assistant',
      speaker: i % 2 === 0 ? 'Ann' : 'assistant',
      sessionId,
      scope,
      eventTime: new Date(at.getTime() + i * 1000),
    }),
  );
}

const chatRequests = (llm: FakeLlm) => llm.chatRequests();

test('decay: confidence × exp(−rate × days since access); below 0.05 soft-deleted; protected facts untouched; a second run changes nothing', async () => {
  const t = await setup();
  try {
    const tenDays = fact(t.index, 'The user is training for a marathon', 10);
    const old = fact(t.index, 'The user had a cold in January', 40);
    const weak = fact(t.index, 'The user maybe likes jazz', 5, { confidence: 0.3 });
    const fresh = fact(t.index, 'The user bought new running shoes', 0);
    const kept = fact(t.index, 'The user is allergic to peanuts', 400);
    assert.equal(t.index.confirmFact(kept, 'test:1'), true);
    t.index.saveEpisode({ content: 'An old message about peanuts', role: 'user', sessionId: 's', scope: 'test:1', eventTime: new Date(0) });

    const r1 = await t.upkeep.run('decay', NOW);
    assert.equal(r1.skipped, undefined);
    assert.ok(Math.abs(t.row(tenDays).confidence - Math.exp(-1)) < 1e-3, String(t.row(tenDays).confidence));
    assert.ok(Math.abs(t.row(weak).confidence - 0.3 * Math.exp(-0.5)) < 1e-3, String(t.row(weak).confidence));
    assert.equal(t.row(fresh).confidence, 1);
    assert.equal(t.row(tenDays).valid_until, null);
    // exp(−4) ≈ 0.018 < 0.05: soft-deleted — the row stays, search forgets it.
    assert.equal(t.row(old).valid_until, nowSec);
    assert.ok(t.row(old), 'never hard-deleted');
    assert.equal((t.db.prepare('SELECT COUNT(*) AS n FROM memory_entities WHERE memory_id = ?').get(old) as { n: number }).n, 0);
    assert.deepEqual(t.index.search('cold January', { scope: 'test:1', kinds: ['fact'] }), []);
    // Protected: 400 days without access and still 1.0.
    assert.equal(t.row(kept).confidence, 1);
    assert.equal(t.row(kept).decay_rate, 0);
    assert.equal(t.row(kept).valid_until, null);
    assert.match(r1.detail, /1 below 0\.05 soft-deleted/);

    const snapshot = JSON.stringify(t.facts());
    const r2 = await t.upkeep.run('decay', NOW);
    assert.equal(r2.changed, 0, r2.detail);
    assert.match(r2.detail, /\b0 decayed, 0 below/);
    assert.equal(JSON.stringify(t.facts()), snapshot, 'the second run changed nothing');
    // Even the next night it decays from where the facts were last used, not twice over.
    const r3 = await t.upkeep.run('decay', new Date(NOW.getTime() + DAY * 1000));
    assert.ok(Math.abs(t.row(tenDays).confidence - Math.exp(-1.1)) < 1e-3, String(t.row(tenDays).confidence));
    assert.ok(r3.changed > 0);
  } finally {
    await t.close();
  }
});

test('consolidation: sessions the user has left become facts in their scope, once', async () => {
  const responder: Responder = (req) => {
    const prompt = lastUserText(req);
    const facts: string[] = [];
    if (prompt.includes('Rex')) facts.push('The user has a dog named Rex');
    if (prompt.includes('Porto')) facts.push('The user is moving to Porto in May');
    if (prompt.includes('violin')) facts.push('The user plays the violin');
    return text(`Here you go:\n${JSON.stringify({ facts })}`);
  };
  const t = await setup(responder);
  try {
    const day = (d: number) => new Date(NOW.getTime() - d * DAY * 1000);
    episodes(t.index, 'c1', 'test:1', day(3), ['My dog Rex chewed my shoes', 'Oh no! Is Rex a puppy?', 'We are moving to Porto in May', 'Exciting!']);
    episodes(t.index, 'c2', 'test:1', day(1), ['I play the violin now', 'Lovely!']);
    episodes(t.index, 'c3', 'test:2', day(2), ['My dog Rex is my only pet', 'Nice']);

    const r1 = await t.upkeep.run('consolidation', NOW);
    assert.equal(chatRequests(t.llm).length, 1, 'only c1: c2 is the newest of its chat, c3 the only one of its chat');
    assert.match(lastUserText(chatRequests(t.llm)[0]!), /USER: My dog Rex chewed my shoes/);
    assert.doesNotMatch(lastUserText(chatRequests(t.llm)[0]!), /violin/);
    const saved = t.facts();
    assert.deepEqual(
      saved.map((f) => [f.content, f.scope, f.session_id]),
      [
        ['The user has a dog named Rex', 'test:1', 'c1'],
        ['The user is moving to Porto in May', 'test:1', 'c1'],
      ],
    );
    const c1Episodes = (t.db.prepare("SELECT id FROM memories WHERE session_id = 'c1' AND kind = 'episode'").all() as Array<{ id: string }>).map((r) => r.id);
    assert.deepEqual(JSON.parse(saved[0]!.source_ids).sort(), [...c1Episodes].sort(), 'facts point at the messages they came from');
    const state = Object.fromEntries(
      (
        t.db.prepare('SELECT session_id, consolidated_at FROM sessions_consolidations').all() as Array<{ session_id: string; consolidated_at: number | null }>
      ).map((r) => [r.session_id, r.consolidated_at !== null]),
    );
    assert.deepEqual(state, { c1: true, c2: false, c3: false });
    assert.match(r1.detail, /1 of 1 pending sessions consolidated, 2 new facts/);

    const r2 = await t.upkeep.run('consolidation', NOW);
    assert.equal(chatRequests(t.llm).length, 1, 'no LLM call the second time');
    assert.equal(t.facts().length, 2, 'no new facts the second time');
    assert.equal(r2.changed, 0);

    // The user moves on in chat 1: c2 is now a left session; chat 2 still has only c3.
    episodes(t.index, 'c4', 'test:1', day(0), ['Hi again', 'Hello!']);
    await t.upkeep.run('consolidation', NOW);
    assert.equal(chatRequests(t.llm).length, 2);
    assert.deepEqual(
      t
        .facts()
        .map((f) => f.content)
        .at(-1),
      'The user plays the violin',
    );
    assert.ok(
      t.facts().every((f) => f.scope === 'test:1'),
      'chat 2 was not consolidated into chat 1',
    );
  } finally {
    await t.close();
  }
});

test('consolidation: a failed LLM call leaves the session pending; long sessions go in chunks of 30', async () => {
  let fail = true;
  const chunkSize = (req: Parameters<Responder>[0]) =>
    lastUserText(req)
      .split('\n')
      .filter((l) => /^(USER|ASSISTANT): /.test(l)).length;
  const t = await setup((req) =>
    fail
      ? { status: 400, json: { error: { message: 'bad request' } } }
      : text(JSON.stringify({ facts: [chunkSize(req) === 30 ? 'The user talked at length about gardening' : `Then ${chunkSize(req)} short lines followed`] })),
  );
  try {
    const lines = Array.from({ length: 35 }, (_, i) => `Line ${i} of a long talk`);
    episodes(t.index, 'long', 'test:1', new Date(NOW.getTime() - 2 * DAY * 1000), lines);
    episodes(t.index, 'newest', 'test:1', NOW, ['latest']);
    const r1 = await t.upkeep.run('consolidation', NOW);
    assert.equal(r1.changed, 0);
    assert.equal(
      (t.db.prepare("SELECT consolidated_at FROM sessions_consolidations WHERE session_id = 'long'").get() as { consolidated_at: number | null })
        .consolidated_at,
      null,
    );
    fail = false;
    const before = chatRequests(t.llm).length;
    await t.upkeep.run('consolidation', NOW);
    assert.equal(chatRequests(t.llm).length - before, 2, '35 messages = two chunks');
    assert.deepEqual(
      t.facts().map((f) => f.content),
      ['The user talked at length about gardening', 'Then 5 short lines followed'],
    );
    assert.notEqual(
      (t.db.prepare("SELECT consolidated_at FROM sessions_consolidations WHERE session_id = 'long'").get() as { consolidated_at: number | null })
        .consolidated_at,
      null,
    );
  } finally {
    await t.close();
  }
});

test('reflection: needs 3 facts from the last 7 days; writes one; not again within 6 days', async () => {
  const t = await setup((req) =>
    text(
      `Reflection on ${
        lastUserText(req)
          .split('\n')
          .filter((l) => l.startsWith('- ')).length
      } facts: the user is busy with music.`,
    ),
  );
  try {
    const now = new Date();
    const later = (days: number) => new Date(now.getTime() + days * DAY * 1000);
    t.index.saveFacts([
      { content: 'The user plays the violin', scope: 'test:1' },
      { content: 'The user joined a choir', scope: 'test:1' },
    ]);
    t.index.saveFacts([{ content: 'The user has one fact only here', scope: 'test:2' }]);
    const r0 = await t.upkeep.run('reflection', now);
    assert.equal(r0.changed, 0);
    assert.match(r0.detail, /needs 3/);
    assert.equal(chatRequests(t.llm).length, 0, 'no LLM call without enough facts');

    t.index.saveFacts([{ content: 'The user bought a metronome', scope: 'test:1' }]);
    const r1 = await t.upkeep.run('reflection', now);
    assert.equal(r1.changed, 1);
    const refl = t.db.prepare("SELECT * FROM memories WHERE kind = 'reflection'").all() as Row[];
    assert.equal(refl.length, 1);
    assert.equal(refl[0]!.scope, 'test:1');
    assert.equal(refl[0]!.content, 'Reflection on 3 facts: the user is busy with music.');
    assert.equal(refl[0]!.decay_rate, 0);
    assert.deepEqual(JSON.parse(refl[0]!.tags), ['weekly']);
    assert.equal(JSON.parse(refl[0]!.source_ids).length, 3);
    assert.equal(t.index.latestReflection('test:1')?.content, refl[0]!.content);
    assert.equal(t.index.latestReflection('test:2'), undefined);

    for (const when of [now, later(1), later(5.9)]) {
      const r = await t.upkeep.run('reflection', when);
      assert.equal(r.changed, 0, `${when.toISOString()}: ${r.detail}`);
    }
    assert.equal((t.db.prepare("SELECT COUNT(*) AS n FROM memories WHERE kind = 'reflection'").get() as { n: number }).n, 1);
    assert.equal(chatRequests(t.llm).length, 1);
    // Six days on, with the week's facts still recent, the next one is due.
    const r2 = await t.upkeep.run('reflection', later(6.5));
    assert.equal(r2.changed, 1);
  } finally {
    await t.close();
  }
});

test('enrichment is skipped with a reason; every run of every job is recorded in job_runs', async () => {
  const t = await setup();
  try {
    const r = await t.upkeep.run('enrichment', NOW);
    assert.match(r.skipped ?? '', /NER/);
    assert.equal(r.changed, 0);
    for (const job of JOB_NAMES) await t.upkeep.run(job, NOW);
    const runs = t.jobRuns();
    assert.deepEqual(
      runs.map((x) => x.job),
      ['enrichment', ...JOB_NAMES],
    );
    for (const run of runs) {
      assert.equal(typeof run.started_at, 'number');
      assert.equal(typeof run.finished_at, 'number');
      assert.ok(['ok', 'skipped'].includes(run.outcome), run.outcome);
      assert.ok(String(run.detail).length > 0);
    }
    assert.equal(runs[0]!.outcome, 'skipped');
    assert.match(runs[0]!.detail, /NER/);
    // Every run is in the log too.
    const logged = t.logs.lines().filter((l) => /^\[Upkeep\] (enrichment|consolidation|decay|reflection): /.test(l.msg));
    assert.equal(logged.length, runs.length);
  } finally {
    await t.close();
  }
});

test('a job never overlaps itself: a second run while the first is going is skipped', async () => {
  const t = await setup(() => ({ ...text(JSON.stringify({ facts: ['The user has a dog named Rex'] })), delayMs: 300 }));
  try {
    episodes(t.index, 'c1', 'test:1', new Date(NOW.getTime() - 2 * DAY * 1000), ['My dog is Rex', 'Nice']);
    episodes(t.index, 'c2', 'test:1', NOW, ['Hello', 'Hi']);
    const scheduler = new Scheduler(t.upkeep, 'UTC', silentLogger());
    const [a, b] = await Promise.all([scheduler.runNow('consolidation'), scheduler.runNow('consolidation')]);
    assert.ok(a);
    assert.equal(b, null, 'the overlapping run was skipped');
    assert.equal(chatRequests(t.llm).length, 1);
    assert.equal(t.jobRuns().length, 1);
    assert.equal(t.facts().length, 1);
    // Other jobs are not blocked by it, and once it has finished it can run again.
    const [c, d] = await Promise.all([scheduler.runNow('consolidation'), scheduler.runNow('decay')]);
    assert.ok(c && d);
    assert.equal(t.jobRuns().length, 3);
    await scheduler.stop();
  } finally {
    await t.close();
  }
});

test('a job on a disabled index is skipped with the reason, and nothing throws', async () => {
  const ws = await tempDir();
  const llm = await startFakeLlm();
  try {
    // Off: written by a newer program (a damaged file would be set aside and a fresh one started).
    const file = path.join(ws.dir, 'memory.db');
    new SqliteMemoryIndex(file, silentLogger()).close();
    const raw = new Database(file);
    raw.prepare("UPDATE memory_metadata SET value = '9999' WHERE key = 'schema_version'").run();
    raw.close();
    const index = new SqliteMemoryIndex(file, silentLogger());
    assert.equal(index.enabled, false);
    const upkeep = new Upkeep(index, new LlmClient(testConfig({ OPENAI_BASE_URL: llm.url }), silentLogger()), silentLogger());
    for (const job of JOB_NAMES) {
      const r = await upkeep.run(job, NOW);
      assert.match(r.skipped ?? '', /index is off/);
    }
    assert.equal(llm.requests.length, 0);
  } finally {
    await llm.close();
    await ws.cleanup();
  }
});

test('CLI: run-job decay twice in a row → exit 0 both times, the second decays nothing', async () => {
  const ws = await tempDir();
  const llm = await startFakeLlm(() => text(JSON.stringify({ facts: ['The user has a dog named Rex'] })));
  try {
    const file = path.join(ws.dir, 'memory.db');
    const index = new SqliteMemoryIndex(file, silentLogger());
    const now = Math.floor(Date.now() / 1000);
    for (const [content, days] of [
      ['The user likes hiking', 3],
      ['The user once visited Oslo', 60],
      ['The user drinks tea', 10],
    ] as const) {
      const [f] = index.saveFacts([{ content, scope: 'console:local' }]);
      index.database!.prepare('UPDATE memories SET last_accessed = ? WHERE id = ?').run(now - days * DAY, f!.id);
    }
    episodes(index, 'old', 'console:local', new Date(Date.now() - 2 * DAY * 1000), ['My dog is called Rex', 'Nice name']);
    episodes(index, 'new', 'console:local', new Date(), ['Hello', 'Hi']);
    index.close();
    const env = { WORKSPACE_DIR: ws.dir, OPENAI_BASE_URL: llm.url };

    const a = await memoryCli(['run-job', 'decay'], env);
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stdout, /^decay: 3 facts checked, 2 decayed, 1 below 0\.05 soft-deleted/m);
    const b = await memoryCli(['run-job', 'decay'], env);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /\b0 decayed\b/);
    assert.match(b.stdout, /\b0 below 0\.05 soft-deleted/);

    const c = await memoryCli(['run-job', 'consolidation'], env);
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /1 of 1 pending sessions consolidated, 1 new facts/);
    const d = await memoryCli(['run-job', 'consolidation'], env);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /0 of 0 pending sessions consolidated, 0 new facts/);
    assert.equal(llm.chatRequests().length, 1, 'the second run did not ask the model again');

    const check = new SqliteMemoryIndex(file, silentLogger());
    const runs = check.database!.prepare('SELECT job, outcome FROM job_runs ORDER BY rowid').all();
    assert.deepEqual(runs, [
      { job: 'decay', outcome: 'ok' },
      { job: 'decay', outcome: 'ok' },
      { job: 'consolidation', outcome: 'ok' },
      { job: 'consolidation', outcome: 'ok' },
    ]);
    check.close();
  } finally {
    await llm.close();
    await ws.cleanup();
  }
});
