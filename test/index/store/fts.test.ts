/**
 * The per-chat full-text index (src/index/store/fts.ts): words are stored under their chat's prefix,
 * so one chat's search reads only its own posting lists — and still finds text in any script,
 * stemmed, whatever punctuation surrounds it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SqliteMemoryIndex } from '../../../src/index/sqlite-memory-index.js';
import { SCOPED_FTS, scopedDocument, scopedTerm } from '../../../src/index/store/fts.js';
import { silentLogger } from '../../../src/core/log.js';

function say(index: SqliteMemoryIndex, scope: string, content: string): string {
  return index.saveEpisode({ content, role: 'user', sessionId: `s-${scope}`, scope, eventTime: new Date() })!;
}

test("risk: a chat search walks every chat's words — each chat's terms are its own in the FTS vocabulary", () => {
  const index = new SqliteMemoryIndex(':memory:', silentLogger());
  say(index, 'telegram:1', 'I drink coffee every morning');
  say(index, 'telegram:2', 'Coffee gives me headaches');
  const db = index.database!;
  db.exec(`CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, ${SCOPED_FTS}, row)`);
  const terms = db.prepare('SELECT term, doc FROM temp.vocab').all() as Array<{ term: string; doc: number }>;
  const coffee = terms.filter((t) => t.term.endsWith('coffe'));
  // Two chats said "coffee": two distinct terms, one document each — never one shared list.
  assert.equal(coffee.length, 2);
  assert.deepEqual(
    coffee.map((t) => t.doc),
    [1, 1],
  );
  assert.ok(
    terms.every((t) => /^z\d+x/.test(t.term)),
    'every stored word carries a chat prefix',
  );
  assert.deepEqual(
    index.search('coffee', { scope: 'telegram:1' }).map((r) => r.content),
    ['I drink coffee every morning'],
  );
  assert.deepEqual(
    index.search('coffee', { scope: 'telegram:2' }).map((r) => r.content),
    ['Coffee gives me headaches'],
  );
  index.close();
});

test('text in any script, with accents, apostrophes and stems, is found by the words a user would type', () => {
  const index = new SqliteMemoryIndex(':memory:', silentLogger());
  const scope = 'telegram:7';
  const ids = {
    cafe: say(index, scope, 'Meet me at the Café Müller at noon'),
    cjk: say(index, scope, '我喜欢 寿司 and ramen'),
    dont: say(index, scope, "I don't eat mushrooms"),
    adopted: say(index, scope, 'We adopted two kittens last spring'),
    rtl: say(index, scope, 'My teacher wrote שלום on the board'),
  };
  const first = (q: string) => index.search(q, { scope })[0]?.id;
  assert.equal(first('café müller'), ids.cafe);
  assert.equal(first('Müller'), ids.cafe);
  assert.equal(first('寿司'), ids.cjk);
  assert.equal(first("don't mushrooms"), ids.dont);
  assert.equal(first('adopt kitten'), ids.adopted, 'stemming still applies under the prefix');
  assert.equal(first('שלום'), ids.rtl);
  // FTS5 syntax in a query is text, never an error: its words still find the memory.
  assert.equal(first('"kitten* OR NEAR(x y) -spring: ^'), ids.adopted);
  index.close();
});

test('stored documents and query phrases are split the same way', () => {
  assert.equal(scopedDocument('z3x', "Dana's CAFÉ, don't!"), 'z3xdana z3xs z3xcafé z3xdon z3xt');
  assert.equal(scopedTerm('z3x', "don't"), '"z3xdon z3xt"');
  assert.equal(scopedTerm('z3x', '"*()'), null, 'nothing searchable, no phrase');
});

test('an older match is still found when the best matches are all filtered out (this conversation, other kinds)', () => {
  const index = new SqliteMemoryIndex(':memory:', silentLogger());
  const scope = 'telegram:9';
  const old = index.saveEpisode({
    content: 'My espresso machine is a Gaggia',
    role: 'user',
    sessionId: 'old',
    scope,
    eventTime: new Date(Date.now() - 86_400_000),
  })!;
  // The current conversation says "espresso" far more often and more densely.
  for (let i = 0; i < 120; i++) {
    index.saveEpisode({ content: `espresso espresso ${i}`, role: 'user', sessionId: 'now', scope, eventTime: new Date() });
  }
  const hits = index.search('espresso', { scope, excludeSessionId: 'now', limit: 5 });
  assert.deepEqual(
    hits.map((h) => h.id),
    [old],
  );
  assert.deepEqual(index.search('espresso', { scope, kinds: ['fact'], limit: 5 }), [], 'no fact says it');
  index.close();
});
