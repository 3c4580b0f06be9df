/**
 * Entities without a model: the seed's regex provider (mentions, hashtags, emails, URLs, dates)
 * plus capitalized names; create_or_get by canonical name and alias, with mention counts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { extractEntities, type ExtractedEntity } from '../../../src/index/store/entities.js';
import { migrate } from '../../../src/index/store/migrations.js';
import { IndexWriter } from '../../../src/index/store/repository.js';
import { SqliteMemoryIndex } from '../../../src/index/sqlite-memory-index.js';
import { silentLogger } from '../../../src/core/log.js';

const pairs = (es: ExtractedEntity[]) => es.map((e) => [e.type, e.text]);
const texts = (s: string) => extractEntities(s).map((e) => e.text);
const keys = (s: string) => extractEntities(s).map((e) => e.key);

function freshDb(): Database.Database {
  const db = new Database(':memory:');
  migrate(db);
  return db;
}

test('@mentions, #hashtags, emails and URLs are found, with their spans', () => {
  const s = 'Ask @dana_k about #hiking, mail ann@example.com or see https://example.com/trail?id=3.';
  const es = extractEntities(s);
  assert.deepEqual(pairs(es), [
    ['person', '@dana_k'],
    ['tag', '#hiking'],
    ['email', 'ann@example.com'],
    ['url', 'https://example.com/trail?id=3'],
  ]);
  for (const e of es) assert.equal(s.slice(e.start, e.end), e.text);
  // Lookup keys drop the sigil and the case, so "@Dana_K" and "@dana_k" are one entity.
  assert.deepEqual(keys('@Dana_K and #Hiking'), ['dana_k', 'hiking']);
});

test('an email is one entity, not a mention or a name inside it', () => {
  assert.deepEqual(pairs(extractEntities('Please write to Dana.Smith@Example.org today')), [['email', 'Dana.Smith@Example.org']]);
});

test('dates: ISO, "5 March 2026" and "March 5"', () => {
  assert.deepEqual(pairs(extractEntities('We meet on 2026-03-05, again on 5 March 2026, and then on March 5.')), [
    ['date', '2026-03-05'],
    ['date', '5 March 2026'],
    ['date', 'March 5'],
  ]);
  assert.deepEqual(pairs(extractEntities('The party is on 12th Dec.')), [['date', '12th Dec']]);
});

test('capitalized names, including multiword names and possessives', () => {
  assert.deepEqual(texts('I had lunch with Dana and Tom yesterday'), ['Dana', 'Tom']);
  assert.deepEqual(texts('We drove from San Francisco to Los Angeles'), ['San Francisco', 'Los Angeles']);
  assert.deepEqual(keys("I fed Ann's cat"), ['ann']);
  assert.deepEqual(texts('I fed Ann’s cat Miso'), ['Ann', 'Miso']);
  assert.deepEqual(texts('Dana Whitaker joined Google last spring'), ['Dana Whitaker', 'Google']);
});

test('"New York" is one name', () => {
  assert.deepEqual(texts('Next month I am moving to New York for work'), ['New York']);
  assert.deepEqual(keys('I love New York in the fall'), ['new york']);
});

test('common words opening a sentence are not names (the list of openers)', () => {
  for (const s of [
    'The weather is nice.',
    'Maybe we should go.',
    'Yesterday it rained.',
    'Thanks for that!',
    'Sounds good to me.',
    'After lunch we slept.',
    'Hello there.',
    'What time is it?',
  ]) {
    assert.deepEqual(texts(s), [], s);
  }
  assert.deepEqual(texts('Maybe Dana knows. The answer is with Tom.'), ['Dana', 'Tom']);
});

test('other common words opening a sentence are not names either', () => {
  for (const s of ['Honestly it was fine.', 'Finally we left.', 'Unfortunately it rained.', 'Nothing happened.', 'Something broke.']) {
    assert.deepEqual(texts(s), [], s);
  }
  assert.deepEqual(texts('Met Dana Whitaker at the station.'), ['Dana Whitaker']);
});

test('all-caps words and lowercase words are not names; one entity per name per text', () => {
  assert.deepEqual(texts('the API and the USA are not people, but dana is lowercase'), []);
  assert.deepEqual(texts('I love Paris. Paris is lovely in spring.'), ['Paris']);
});

test('create_or_get: the same name twice is one entity with mention_count 2', () => {
  const db = freshDb();
  const w = new IndexWriter(db);
  const a = w.createOrGetEntity({ text: 'Dana', key: 'dana', type: 'other' }, 'test:1');
  const b = w.createOrGetEntity({ text: 'Dana', key: 'dana', type: 'other' }, 'test:1');
  assert.equal(a, b);
  const rows = db.prepare('SELECT canonical_name, mention_count FROM entities').all();
  assert.deepEqual(rows, [{ canonical_name: 'Dana', mention_count: 2 }]);
});

test('create_or_get: alias lookup ignores case and merges the new surface form as an alias', () => {
  const db = freshDb();
  const w = new IndexWriter(db);
  const first = extractEntities('Please say hi to @DanaK').find((e) => e.type === 'person');
  const second = extractEntities('@danak replied').find((e) => e.type === 'person');
  const a = w.createOrGetEntity(first!, 'test:1');
  const b = w.createOrGetEntity(second!, 'test:1');
  assert.equal(a, b);
  const row = db.prepare('SELECT canonical_name, type, mention_count, aliases FROM entities WHERE id = ?').get(a) as {
    canonical_name: string;
    type: string;
    mention_count: number;
    aliases: string;
  };
  assert.equal(row.canonical_name, '@DanaK', 'the first surface form stays the canonical name');
  assert.equal(row.type, 'person');
  assert.equal(row.mention_count, 2);
  assert.deepEqual(JSON.parse(row.aliases), ['@DanaK', '@danak']);
  assert.equal((db.prepare('SELECT COUNT(*) AS n FROM entities').get() as { n: number }).n, 1);
  // A different type with the same key is a different entity (#danak the tag is not @DanaK).
  const c = w.createOrGetEntity({ text: '#danak', key: 'danak', type: 'tag' }, 'test:1');
  assert.notEqual(c, a);
});

test('messages link their entities; mentions across messages count on one entity', () => {
  const index = new SqliteMemoryIndex(':memory:', silentLogger());
  const base = { role: 'user' as const, sessionId: 's1', scope: 'test:1', eventTime: new Date() };
  const m1 = index.saveEpisode({ ...base, content: 'I met Dana at the café, mail her at dana@example.com' })!;
  index.saveEpisode({ ...base, content: 'dana is lowercase here but Dana is not' });
  const db = index.database!;
  const linked = db
    .prepare('SELECT e.canonical_name, e.type FROM memory_entities me JOIN entities e ON e.id = me.entity_id WHERE me.memory_id = ? ORDER BY e.type')
    .all(m1);
  assert.deepEqual(linked, [
    { canonical_name: 'dana@example.com', type: 'email' },
    { canonical_name: 'Dana', type: 'other' },
  ]);
  const dana = db.prepare("SELECT mention_count FROM entities WHERE canonical_name = 'Dana'").get() as { mention_count: number };
  assert.equal(dana.mention_count, 2);
  const info = index.entityInfo('DANA', 'test:1');
  assert.equal(info?.name, 'Dana');
  assert.equal(info?.memories.length, 2);
  assert.equal(index.entityInfo('Dana', 'test:2'), null, 'another chat knows nothing about Dana');
  index.close();
});

test("risk: entities leak across chats — get_entity_info shows only this chat's spelling, aliases and mention count", () => {
  const index = new SqliteMemoryIndex(':memory:', silentLogger());
  const at = (scope: string, content: string) => index.saveEpisode({ role: 'user', sessionId: `s-${scope}`, scope, eventTime: new Date(), content });
  // Chat A: a link whose path is a case-sensitive token, and a name, mentioned often.
  const SECRET_LINK = 'https://files.example/share/XyZ-Secret-Q7';
  for (let i = 0; i < 5; i++) at('test:A', `Grab the draft at ${SECRET_LINK} and ask Dana Whitaker ${i}`);
  at('test:A', 'Also @DanaW_Private knows');
  // Chat B: the same link and name, in other spellings, once.
  at('test:B', 'is https://files.example/share/xyz-secret-q7 still up? Dana Whitaker asked');
  at('test:B', 'ping @danaw_private');

  const link = index.entityInfo('https://files.example/share/xyz-secret-q7', 'test:B');
  assert.ok(link, 'B knows its own link');
  assert.equal(link.name, 'https://files.example/share/xyz-secret-q7');
  assert.deepEqual(link.aliases, ['https://files.example/share/xyz-secret-q7']);
  assert.equal(link.mentions, 1);
  const dana = index.entityInfo('dana whitaker', 'test:B')!;
  assert.equal(dana.mentions, 1, "B's count, not both chats'");
  const handle = index.entityInfo('@danaw_private', 'test:B')!;
  assert.equal(handle.name, '@danaw_private');
  assert.deepEqual(handle.aliases, ['@danaw_private']);
  const shown = JSON.stringify([link, dana, handle]);
  assert.ok(!shown.includes('XyZ-Secret-Q7'), shown);
  assert.ok(!shown.includes('@DanaW_Private'), shown);

  // A sees its own, with its own counts.
  const a = index.entityInfo('https://files.example/share/xyz-secret-q7', 'test:A')!;
  assert.equal(a.name, SECRET_LINK);
  assert.equal(a.mentions, 5);
  assert.equal(index.entityInfo('dana whitaker', 'test:A')!.mentions, 5);
  // Entity search still finds each chat's own memories, and only those.
  const found = index.search('Dana Whitaker', { scope: 'test:B' }).map((r) => r.content);
  assert.ok(found.includes('is https://files.example/share/xyz-secret-q7 still up? Dana Whitaker asked'), JSON.stringify(found));
  assert.ok(
    found.every((c) => !c.includes('XyZ') && !c.includes('Grab the draft')),
    JSON.stringify(found),
  );
  index.close();
});
