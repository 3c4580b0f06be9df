/**
 * Facts: two-level deduplication (exact within a batch; Jaccard ≥ 0.75 against active facts),
 * conflicts (older fact's confidence → 0.3, the new one records `supersedes`), correct and
 * confirm, and soft deletion only — a row, once written, is never removed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SqliteMemoryIndex } from '../../src/index/sqlite-memory-index.js';
import { silentLogger } from '../../src/core/log.js';

interface FactRow {
  id: string;
  content: string;
  confidence: number;
  decay_rate: number;
  valid_until: number | null;
  attributes: string;
  source_ids: string;
}

function setup() {
  const index = new SqliteMemoryIndex(':memory:', silentLogger());
  const db = index.database!;
  const rows = (): FactRow[] =>
    db
      .prepare("SELECT id, content, confidence, decay_rate, valid_until, attributes, source_ids FROM memories WHERE kind = 'fact' ORDER BY rowid")
      .all() as FactRow[];
  const row = (id: string): FactRow =>
    db.prepare('SELECT id, content, confidence, decay_rate, valid_until, attributes, source_ids FROM memories WHERE id = ?').get(id) as FactRow;
  const count = (): number => (db.prepare('SELECT COUNT(*) AS n FROM memories').get() as { n: number }).n;
  return { index, db, rows, row, count };
}

const S = 'test:1';

test('an exact duplicate within one batch is saved once (case and punctuation do not matter)', () => {
  const { index, rows } = setup();
  const out = index.saveFacts([
    { content: 'The user likes green tea.', scope: S },
    { content: 'The user likes green tea.', scope: S },
    { content: '  the USER likes green tea ', scope: S },
    { content: 'The user plays chess on Sundays', scope: S },
  ]);
  assert.deepEqual(
    rows().map((r) => r.content),
    ['The user likes green tea.', 'The user plays chess on Sundays'],
  );
  assert.equal(out.filter((o) => !o.duplicateOf).length, 2);
  index.close();
});

test('a near-duplicate (Jaccard ≥ 0.75) of an active fact is not saved: duplicateOf names the existing one', () => {
  const { index, rows } = setup();
  const [first] = index.saveFacts([{ content: 'The user lives in Berlin with two cats', scope: S }]);
  const [again] = index.saveFacts([{ content: 'The user lives in Berlin with her two cats', scope: S }]);
  assert.equal(again?.duplicateOf, first!.id);
  assert.equal(rows().length, 1);
  assert.equal(rows()[0]!.confidence, 1, 'a duplicate is not a conflict');
  // The same sentence in another chat is that chat's own fact.
  const [other] = index.saveFacts([{ content: 'The user lives in Berlin with her two cats', scope: 'test:2' }]);
  assert.equal(other?.duplicateOf, undefined);
  assert.equal(rows().length, 2);
  index.close();
});

test('a soft-deleted fact does not block saving the same fact again', () => {
  const { index, db, rows } = setup();
  const [first] = index.saveFacts([{ content: 'The user owns a red bicycle', scope: S }]);
  db.prepare('UPDATE memories SET valid_until = 1 WHERE id = ?').run(first!.id);
  const [again] = index.saveFacts([{ content: 'The user owns a red bicycle', scope: S }]);
  assert.equal(again?.duplicateOf, undefined);
  assert.notEqual(again?.id, first!.id);
  assert.equal(rows().length, 2);
  index.close();
});

test('a conflicting fact (same subject, new value): the older drops to confidence 0.3, the new records supersedes', () => {
  const { index, row } = setup();
  const [old] = index.saveFacts([{ content: "User's favourite coffee is latte", scope: S }]);
  const [next] = index.saveFacts([{ content: "User's favourite coffee is flat white", scope: S }]);
  assert.ok(old && next && !next.duplicateOf);
  assert.deepEqual(next.supersedes, [old.id]);
  assert.equal(row(old.id).confidence, 0.3);
  assert.equal(row(old.id).valid_until, null, 'the older fact is kept (only less trusted)');
  assert.equal(row(next.id).confidence, 1);
  assert.deepEqual(JSON.parse(row(next.id).attributes).supersedes, [old.id]);
  index.close();
});

test('a superseded fact ranks below the fact that replaced it, even when both came in one batch', () => {
  const { index, row } = setup();
  // One consolidation can return both the old and the new value; they then share a timestamp.
  const [old, next] = index.saveFacts([
    { content: "User's favourite coffee is latte", scope: S },
    { content: "User's favourite coffee is flat white", scope: S },
  ]);
  assert.deepEqual(next?.supersedes, [old!.id]);
  assert.equal(row(old!.id).confidence, 0.3);
  for (const q of ['favourite coffee', "what is the user's favourite coffee"]) {
    const rs = index.search(q, { scope: S, kinds: ['fact'] });
    assert.equal(rs[0]?.content, "User's favourite coffee is flat white", `${q}: ${JSON.stringify(rs.map((r) => [r.content, r.confidence]))}`);
  }
  index.close();
});

test('facts about different things that share words are not conflicts', () => {
  const { index, rows } = setup();
  index.saveFacts([{ content: "The user's sister is called Dana", scope: S }]);
  const [brother] = index.saveFacts([{ content: "The user's brother is called Tom", scope: S }]);
  index.saveFacts([{ content: "User's favourite coffee is latte", scope: S }]);
  const [tea] = index.saveFacts([{ content: "User's favourite tea is sencha", scope: S }]);
  assert.equal(brother?.supersedes, undefined);
  assert.equal(tea?.supersedes, undefined);
  assert.deepEqual(
    rows().map((r) => [r.content, r.confidence]),
    [
      ["The user's sister is called Dana", 1],
      ["The user's brother is called Tom", 1],
      ["User's favourite coffee is latte", 1],
      ["User's favourite tea is sencha", 1],
    ],
  );
  index.close();
});

test('correctFact soft-deletes the old fact (still in the table) and saves the new one with supersedes', () => {
  const { index, row, rows } = setup();
  const [old] = index.saveFacts([{ content: 'The user works at Acme as a designer', scope: S }]);
  const newId = index.correctFact(old!.id, S, 'The user works at Globex as a product manager', 'conv-2');
  assert.ok(newId && newId !== old!.id);
  const o = row(old!.id);
  assert.ok(o, 'the old row is still there');
  assert.equal(typeof o.valid_until, 'number');
  const n = row(newId);
  assert.equal(n.content, 'The user works at Globex as a product manager');
  assert.equal(n.valid_until, null);
  assert.deepEqual(JSON.parse(n.attributes).supersedes, [old!.id]);
  assert.deepEqual(JSON.parse(n.source_ids), [old!.id]);
  assert.equal(rows().length, 2);
  // Search forgets the old one; stats count only the active one.
  assert.deepEqual(
    index.search('where does the user work', { scope: S }).map((r) => r.id),
    [newId],
  );
  assert.equal(index.stats(S).byKind.fact, 1);
  // Correcting it again, or from another chat, finds nothing.
  assert.equal(index.correctFact(old!.id, S, 'anything else'), null);
  assert.equal(index.correctFact(newId, 'test:2', 'The user is unemployed'), null);
  assert.equal(row(newId).valid_until, null);
  assert.equal(rows().length, 2);
  index.close();
});

test('confirmFact protects a fact: decay_rate 0, confidence 1 — only in its own chat', () => {
  const { index, row } = setup();
  const [old] = index.saveFacts([{ content: "User's favourite coffee is latte", scope: S }]);
  index.saveFacts([{ content: "User's favourite coffee is flat white", scope: S }]);
  assert.equal(row(old!.id).confidence, 0.3);
  assert.equal(index.confirmFact(old!.id, 'test:2'), false);
  assert.equal(row(old!.id).decay_rate, 0.1);
  assert.equal(index.confirmFact(old!.id, S), true);
  assert.equal(row(old!.id).decay_rate, 0);
  assert.equal(row(old!.id).confidence, 1);
  assert.equal(index.confirmFact('fact_0000000000000000', S), false);
  index.close();
});

test('no hard deletes: the row count never shrinks through saving, conflicts, corrections, confirmations and search', () => {
  const { index, count, db } = setup();
  let last = count();
  const check = (what: string) => {
    const n = count();
    assert.ok(n >= last, `${what}: ${last} → ${n}`);
    last = n;
  };
  index.saveEpisode({ content: 'I switched from latte to flat white', role: 'user', sessionId: 's1', scope: S, eventTime: new Date() });
  check('episode');
  const [a] = index.saveFacts([{ content: "User's favourite coffee is latte", scope: S }]);
  check('fact');
  index.saveFacts([
    { content: "User's favourite coffee is flat white", scope: S },
    { content: "User's favourite coffee is flat white", scope: S },
  ]);
  check('conflict');
  const b = index.correctFact(a!.id, S, 'User used to drink latte');
  check('correct');
  index.confirmFact(b!, S);
  check('confirm');
  index.search('coffee', { scope: S });
  check('search');
  index.saveFacts([{ content: 'User used to drink latte', scope: S }]);
  check('duplicate');
  assert.equal(count(), 4);
  // Nothing can reach the table's rows but soft deletion: every inactive row is still there.
  const inactive = (db.prepare('SELECT COUNT(*) AS n FROM memories WHERE valid_until IS NOT NULL').get() as { n: number }).n;
  assert.equal(inactive, 1);
  index.close();
});
