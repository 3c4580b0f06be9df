/**
 * The general signals of the ranking (src/index/search/dates.ts, speakers.ts, relevant.ts, eval.ts's
 * split): dates read from a question, names matched to speakers, small talk, and a
 * deterministic tune/report split. Nothing here comes from a dataset.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { datesIn } from '../../../src/index/search/dates.js';
import { askedFor, holds } from '../../../src/index/search/answer-shape.js';
import { otherForms } from '../../../src/index/search/irregular.js';
import { addresses, sameName, soundex } from '../../../src/index/search/speakers.js';
import { isSmallTalk, relevantHits } from '../../../src/index/search/relevant.js';
import { splitConversations } from '../../../src/index/eval.js';
import { SqliteMemoryIndex } from '../../../src/index/sqlite-memory-index.js';
import { silentLogger } from '../../../src/core/log.js';

const day = (y: number, m: number, d: number) => Math.floor(new Date(y, m - 1, d).getTime() / 1000);

test('dates in a question: day-month-year, month-day, ISO, dotted, a month; a day without a year in each year the chat covers', () => {
  for (const q of ['What did we cook on 12 May 2024?', 'what happened on May 12th, 2024', 'plans for 2024-05-12', 'where was she on 12.05.2024']) {
    const [r] = datesIn(q, [2024]);
    assert.ok(r && r.from <= day(2024, 5, 12) && r.to > day(2024, 5, 13) - 1 && !r.month, q);
  }
  const month = datesIn('what did I do in March 2023?', []);
  assert.equal(month.length, 1);
  assert.ok(month[0]!.month && month[0]!.from < day(2023, 3, 1) && month[0]!.to > day(2023, 3, 31));
  assert.equal(datesIn('Dinner on 3 June', [2022, 2023]).length, 2);
  assert.deepEqual(datesIn('I may come with 2 friends', [2024]), []);
});

test('names: Soundex, misspellings of the same sound, and the name others address someone by', () => {
  assert.equal(soundex('Robert'), 'R163');
  assert.equal(soundex('Rupert'), 'R163');
  assert.ok(sameName('faheem', 'fahim'));
  assert.ok(sameName('nikolas', 'nicolas'));
  assert.ok(!sameName('anna', 'ian'));
  assert.ok(!sameName('kate', 'kevin'));
  assert.ok(addresses('Thanks Kate, that was fun', 'Kate'));
  assert.ok(addresses('That sounds great, Kate!', 'Kate'));
  assert.ok(addresses('Kate, are you coming?', 'Kate'));
  assert.ok(!addresses('I met Kate at the station', 'Kate'));
});

test('a handle in the speaker field: the name the others call them by names them in a question', () => {
  const index = new SqliteMemoryIndex(':memory:', silentLogger());
  const scope = 'test:handles';
  let seq = 0;
  const say = (speaker: string, content: string) =>
    index.saveEpisode({
      content,
      role: 'user',
      speaker,
      sessionId: 's',
      scope,
      eventTime: new Date(Date.UTC(2024, 0, 1, 10, seq)),
      sourceMessageId: `m${++seq}`,
    });
  say('kt_88', 'I finally booked the pottery class for Saturday');
  say('jo', 'Nice one, Kate! Which studio?');
  say('kt_88', 'The small one near the river');
  say('jo', 'Thanks Kate, I might join you at pottery');
  say('jo', 'I booked a pottery class too, last year');
  const ids = index.search('When is Kate going to the pottery class?', { scope }).flatMap((r) => r.sourceMessageIds);
  assert.equal(ids[0], 'm1', JSON.stringify(ids));
  index.close();
});

test('small talk injects nothing into # Relevant Memory; a real question still does', () => {
  for (const m of ['hi', 'Hey, how are you?', 'thanks!!', 'ok cool', 'good night', 'lol']) assert.ok(isSmallTalk(m), m);
  assert.ok(!isSmallTalk('how is your sister in Lisbon?'));
  const index = new SqliteMemoryIndex(':memory:', silentLogger());
  const scope = 'test:talk';
  for (let i = 0; i < 150; i++) {
    index.saveEpisode({
      content: i === 70 ? 'My sister Dana moved to Lisbon last spring' : `Good morning! How are you doing today? ${i % 7 === 0 ? 'thanks' : 'ok'}`,
      role: 'user',
      speaker: 'Ann',
      sessionId: 'old',
      scope,
      eventTime: new Date(Date.UTC(2024, 0, 1, 0, i)),
    });
  }
  assert.deepEqual(relevantHits(index, 'good morning, how are you?', { scope }), []);
  assert.ok(index.search('good morning, how are you?', { scope }).length > 0, 'the search itself finds the greetings');
  assert.match(relevantHits(index, 'Is Dana still in Lisbon?', { scope })[0]?.content ?? '', /Lisbon/);
  index.close();
});

test('the tune/report split: halves by a hash of the conversation id, disjoint, stable, whatever the order of the file', () => {
  const convs = Array.from({ length: 11 }, (_, i) => ({ id: `conv-${i}` }));
  const tune = splitConversations(convs, 'tune').map((c) => c.id);
  const report = splitConversations(convs, 'report').map((c) => c.id);
  assert.equal(tune.length + report.length, 11);
  assert.ok(Math.abs(tune.length - report.length) <= 1);
  assert.equal(tune.filter((id) => report.includes(id)).length, 0);
  assert.deepEqual(
    splitConversations([...convs].reverse(), 'tune')
      .map((c) => c.id)
      .sort(),
    [...tune].sort(),
  );
  assert.deepEqual(splitConversations(convs, 'all'), convs);
});

test("a name one letter off a speaker's, never written in the chat, still names that speaker; a real other name does not", () => {
  const index = new SqliteMemoryIndex(':memory:', silentLogger());
  const scope = 'test:typo';
  let seq = 0;
  const say = (speaker: string, content: string) =>
    index.saveEpisode({
      content,
      role: 'user',
      speaker,
      sessionId: 's',
      scope,
      eventTime: new Date(Date.UTC(2024, 0, 1, 10, seq)),
      sourceMessageId: `m${++seq}`,
    });
  say('akib', 'We got snow again today');
  say('muhhamed', 'Snow here too, so much snow, more snow all week');
  // "Akim" is nobody's word in this chat: a typo of Akib (Soundex differs: A250 vs A210).
  assert.equal(index.search('When did Akim see snow?', { scope }).flatMap((r) => r.sourceMessageIds)[0], 'm1');
  say('muhhamed', 'My cousin Akin loves snow, snow and more snow');
  // "Akin" is written in the chat: another person, not a typo of Akib.
  assert.equal(index.search('Does Akin like snow?', { scope }).flatMap((r) => r.sourceMessageIds)[0], 'm3');
  index.close();
});

test('the years of a chat are read only when the question names a day without a year', () => {
  let reads = 0;
  const years = () => (reads++, [2023, 2024]);
  assert.deepEqual(datesIn('What did I say about the quarterly report?', years), []);
  assert.equal(datesIn('what happened on 2024-05-12 and in March 2023', years).length, 2);
  assert.equal(reads, 0);
  assert.equal(datesIn('Dinner on 3 June, or on June 4th?', years).length, 4);
  assert.equal(reads, 1, 'read once per question');
});

test('what a question asks for: a time for "when…", a place for "where…", a duration for "how long…"; which messages hold one', () => {
  assert.equal(askedFor('When did Ann visit the museum?'), 'time');
  assert.equal(askedFor('What time did the party start?'), 'time');
  assert.equal(askedFor('Where did Bo spend New Year?'), 'place');
  assert.equal(askedFor('Which city does Ann live in?'), 'place');
  assert.equal(askedFor('What countries has Bo visited?'), 'place');
  assert.equal(askedFor('In what month were they both sick?'), 'time');
  assert.equal(askedFor('How long did the flu last?'), 'duration');
  assert.equal(askedFor('How long ago did we meet?'), 'time');
  assert.equal(askedFor('What does Ann like to cook?'), undefined);
  assert.equal(askedFor('Do you know when it opens?'), undefined, 'only a question that starts so');
  for (const t of ['I went there yesterday', 'See you next Friday!', 'It starts at 7pm', 'back on 3 March', 'that was in 2019', 'on Sunday we hiked'])
    assert.ok(holds('time', t), t);
  for (const t of ['I love that museum', 'The time of my life', 'may I come?']) assert.ok(!holds('time', t), t);
  for (const t of ['I was sick for three days', 'a couple of weeks', 'we danced all night']) assert.ok(holds('duration', t), t);
  assert.ok(!holds('duration', 'see you in the morning'));
  for (const t of ['We flew to Miami', 'dinner at Osaka with friends', 'I grew up in the Bronx']) assert.ok(holds('place', t), t);
  for (const t of ['we stayed in and cooked', 'I went to bed early', 'In my opinion it is fine']) assert.ok(!holds('place', t), t);
});

test('irregular verbs: each form gives the others; other words give nothing', () => {
  assert.deepEqual(otherForms('buy'), ['bought']);
  assert.deepEqual(otherForms('Bought'), ['buy']);
  assert.deepEqual(otherForms('swim').sort(), ['swam', 'swum']);
  assert.deepEqual(otherForms('cook'), []);
});
