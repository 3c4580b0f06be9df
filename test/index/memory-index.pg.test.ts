/**
 * The memory index in PostgreSQL (PgMemoryIndex, src/index/pg/): the MemoryIndex contract on a
 * throwaway cluster — each reopen is another process with an empty cache, so what it finds came
 * from the database — then what several processes, a kept cache and /forget need of it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { silentLogger } from '../../src/core/log.js';
import { PgMemoryIndex } from '../../src/index/pg/pg-memory-index.js';
import { PgIndexPortable } from '../../src/index/pg/portable-pg.js';
import type { Database } from '../../src/storage/pg/database.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { migratedDatabase, testDatabase } from '../helpers/pg-stores.js';
import { tempDir } from '../helpers/workspace.js';
import { patient, waitFor } from '../helpers/wait.js';
import { memoryIndexContract, type MemoryIndexHandle } from './memory-index.contract.js';
import { runCompare, type EvalDataset } from '../../src/index/eval.js';
import { runComparePg } from '../../src/index/pg/eval-pg.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

/** Processes on one migrated database: each `open` is a Database and a PgMemoryIndex of its own. */
async function processes() {
  const url = await migratedDatabase(cluster);
  const opened: Array<{ db: Database; index: PgMemoryIndex | undefined }> = [];
  return {
    url,
    /** A Database of its own, closed with the rest. */
    db(): Database {
      const db = testDatabase(url);
      opened.push({ db, index: undefined });
      return db;
    },
    async open(cacheFile?: string): Promise<PgMemoryIndex> {
      const db = testDatabase(url);
      const index = await PgMemoryIndex.open({ db, log: silentLogger(), ...(cacheFile ? { cacheFile } : {}) });
      opened.push({ db, index });
      return index;
    },
    async cleanup() {
      for (const o of opened) {
        await o.index?.shutdown();
        await o.db.close();
      }
    },
  };
}

describe('PgMemoryIndex meets the MemoryIndex contract', () =>
  memoryIndexContract('PgMemoryIndex', async () => {
    const p = await processes();
    const h: MemoryIndexHandle = {
      store: await p.open(),
      reopen: async () => {
        await (h.store as PgMemoryIndex).shutdown();
        h.store = await p.open();
        return h.store;
      },
      portable: async () => {
        await (h.store as PgMemoryIndex).shutdown();
        return new PgIndexPortable(p.db());
      },
      cleanup: () => p.cleanup(),
    };
    return h;
  }));

const A = 'telegram:1';
const T0 = Date.parse('2026-03-02T09:00:00Z');

function talk(index: PgMemoryIndex, lines: string[], scope = A): string[] {
  return lines.map((content, i) => {
    const id = index.saveEpisode({
      content,
      role: i % 2 ? 'assistant' : 'user',
      speaker: i % 2 ? 'assistant' : 'Ann',
      sessionId: 'c1',
      scope,
      eventTime: new Date(T0 + i * 60_000),
      sourceMessageId: `m${i}`,
    });
    assert.ok(id);
    return id;
  });
}

const LINES = [
  'I adopted a grey cat called Miso last spring',
  'Miso sounds lovely, how is she settling in?',
  'She sleeps in the garden and hates the vacuum cleaner',
  'We booked the flight to Lisbon for the ninth of March',
  'Dana Whitaker is coming to Lisbon with us',
  'The dentist moved my appointment to Friday morning',
];
const QUERIES = ['cat Miso', 'flight to Lisbon', 'who comes to Lisbon', 'dentist appointment', 'garden vacuum', 'Dana Whitaker'];

test('a second process with an empty cache finds the same memories, in the same order, as the one that stored them', async () => {
  const p = await processes();
  try {
    const first = await p.open();
    talk(first, LINES);
    const [fact] = first.saveFacts([{ content: 'The user has a grey cat called Miso', scope: A }]);
    first.saveReflection('The user travels to Lisbon in March', A, []);
    await first.settle();
    const second = await p.open();
    for (const q of QUERIES) {
      const want = first.search(q, { scope: A, limit: 10 }).map((r) => [r.id, r.content]);
      assert.ok(want.length > 0, q);
      assert.deepEqual(
        second.search(q, { scope: A, limit: 10 }).map((r) => [r.id, r.content]),
        want,
        q,
      );
      assert.deepEqual(
        second.searchBm25(q, { scope: A, limit: 10 }).map((r) => r.id),
        first.searchBm25(q, { scope: A, limit: 10 }).map((r) => r.id),
        q,
      );
    }
    // Entity ids are the cache's own (derived from the text in each); the profile is the same.
    const profile = (index: PgMemoryIndex) => ({ ...index.entityInfo('Dana Whitaker', A), id: undefined });
    assert.deepEqual(profile(second), profile(first));
    assert.deepEqual(second.getFact(fact!.id, A), first.getFact(fact!.id, A));
    assert.equal(second.latestReflection(A)?.content, 'The user travels to Lisbon in March');
    assert.equal(second.hasEpisode(A, 'm3', 'assistant'), true, 'the start after a crash finds the rows already stored');
  } finally {
    await p.cleanup();
  }
});

test('a running process finds what another stored moments later, without being asked (the change feed and its notification)', async () => {
  const p = await processes();
  try {
    const first = await p.open();
    const second = await p.open();
    const [id] = talk(first, ['The boat to Mull leaves Oban at seven']);
    await waitFor(() => second.search('boat to Mull', { scope: A })[0]?.id === id, patient(10_000), 'the second process finds the new memory');
    const [fact] = second.saveFacts([{ content: 'The user sails from Oban', scope: A }]);
    const fixed = second.correctFact(fact!.id, A, 'The user sails from Mallaig');
    await waitFor(() => first.getFact(fact!.id, A)?.valid === false, patient(10_000), 'the correction reaches the first process');
    assert.deepEqual(
      first.search('where does the user sail from', { scope: A, kinds: ['fact'] }).map((r) => r.id),
      [fixed],
    );
  } finally {
    await p.cleanup();
  }
});

test('risk: a fact acknowledged before a crash is lost — a kept cache writes what it had not written at its next open', async () => {
  const p = await processes();
  const ws = await tempDir();
  try {
    const cacheFile = path.join(ws.dir, 'memory-cache.db');
    const crashed = await p.open(cacheFile);
    crashed.saveFacts([{ content: 'The user is allergic to peanuts', scope: A }]);
    // Closed at once, as a killed process: the background write never ran.
    crashed.close();
    const elsewhere = await p.open();
    assert.deepEqual(elsewhere.search('peanuts', { scope: A }), [], 'not in the database yet');
    const restarted = await p.open(cacheFile);
    assert.equal(restarted.search('allergic to peanuts', { scope: A }).length, 1);
    await elsewhere.settle();
    assert.equal(elsewhere.search('allergic to peanuts', { scope: A })[0]?.content, 'The user is allergic to peanuts');
  } finally {
    await p.cleanup();
    await ws.cleanup();
  }
});

test('risk: a forgotten memory stays in PostgreSQL — after /forget no byte of it is in the table, and the other processes lose it too', async () => {
  const p = await processes();
  const admin = testDatabase(p.url);
  try {
    const first = await p.open();
    const second = await p.open();
    talk(first, ['My new PIN is hidden near Tobermory harbour', 'The weather in Oban was fine']);
    await first.settle();
    await second.settle();
    assert.ok(second.search('Tobermory', { scope: A }).some((r) => r.content.includes('Tobermory')));
    const matches = (text: string) => /tobermory/i.test(text);
    const rows = first.erase!.matching(A, matches);
    first.erase!.memoriesAndEntities(rows, A, matches);
    await first.scrubFreedSpace();
    await second.settle();
    assert.ok(second.search('Tobermory harbour', { scope: A }).every((r) => !r.content.includes('Tobermory')));
    assert.deepEqual(second.erase!.matching(A, matches), []);
    assert.equal(second.search('weather in Oban', { scope: A }).length, 1);
    // Every page of the table as PostgreSQL holds it, dead rows included (pageinspect).
    await admin.query('CREATE EXTENSION IF NOT EXISTS pageinspect');
    const { rows: pages } = await admin.query<{ n: string }>("SELECT pg_relation_size('memory_rows') / current_setting('block_size')::int AS n");
    let seen = '';
    for (let i = 0; i < Number(pages[0]!.n); i++) {
      const { rows: raw } = await admin.query<{ page: Buffer }>('SELECT get_raw_page($1, $2) AS page', ['memory_rows', i]);
      seen += raw[0]!.page.toString('latin1');
    }
    assert.ok(seen.includes('Oban'), 'the pages were read');
    assert.ok(!seen.includes('Tobermory'), 'no byte of the forgotten memory in the table');
    const { rows: meta } = await admin.query<{ key: string }>('SELECT key FROM memory_meta');
    assert.deepEqual(meta, [], "a cache's own position and schema version are not shared");
  } finally {
    await admin.close();
    await p.cleanup();
  }
});

test('the retrieval eval on PostgreSQL (written there, searched in a cache rebuilt from it) gives the embedded figures', async () => {
  const conv = (id: string, lines: string[]) => ({
    id,
    messages: lines.map((text, i) => ({
      id: `${id}-${i}`,
      speaker: i % 2 ? 'Ben' : 'Ann',
      role: 'user' as const,
      text,
      timestamp: new Date(T0 + i * 60_000).toISOString(),
    })),
    questions: QUERIES.map((question, i) => ({ question, evidence: [`${id}-${i}`], category: 'one' })),
  });
  const data: EvalDataset = { conversations: [conv('c1', LINES), conv('c2', [...LINES].reverse())] };
  const url = await cluster.createDatabase();
  const pg = await runComparePg(url, data, [1, 3]);
  const embedded = runCompare(data, [1, 3]);
  assert.deepEqual([pg.bm25.recall, pg.hybrid.recall, pg.relevant], [embedded.bm25.recall, embedded.hybrid.recall, embedded.relevant]);
  assert.equal(pg.bm25.questions, 12);
  const admin = testDatabase(url);
  try {
    const { rows } = await admin.query("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'membot_eval_%'");
    assert.deepEqual(rows, [], 'the run leaves nothing behind');
  } finally {
    await admin.close();
  }
});
