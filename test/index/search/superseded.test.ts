/**
 * Which texts state a value a correction replaced (index/search/superseded.ts): a note line or
 * message that says the old value is marked with the current one; the correction's own words,
 * a text that only shares a name, and a text about something else are left as they are.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Superseded, asksAboutBefore, rankBelow } from '../../../src/index/search/superseded.js';
import type { Correction } from '../../../src/index/memory-index.js';

const DAY = Date.parse('2026-11-27T10:00:00Z') / 1000;
const porto: Correction = {
  id: 'fact_1',
  old: 'Marta lives in Porto',
  since: DAY - 86_400,
  until: DAY,
  currentId: 'fact_2',
  current: 'Marta lives in Braga',
  currentSince: DAY,
};

test('risk: an old value shown as current — a note line saying Marta lives in Porto is marked with Braga and the day of the correction', () => {
  const old = new Superseded([porto]);
  assert.equal(
    old.mark('[09:12] User: my sister Marta lived in Porto for years | Assistant: Noted!'),
    '[09:12] User: my sister Marta lived in Porto for years | Assistant: Noted! (later corrected, 2026-11-27: Marta lives in Braga)',
  );
  assert.equal(old.stated('- Marta lives in Porto.'), porto, 'a MEMORY.md line');
});

test('risk: true lines marked as corrected — the correction itself, a mere mention of the city, and other facts stay unmarked', () => {
  const old = new Superseded([porto]);
  for (const line of [
    '[10:00] User: Marta moved from Porto to Braga | Assistant: Updated.',
    '[10:01] User: I visited Porto last summer | Assistant: Nice!',
    '[10:02] User: Marta likes green tea | Assistant: Noted.',
    'Marta lives in Braga',
  ]) {
    assert.equal(old.mark(line), line);
  }
  assert.equal(new Superseded([]).mark('Marta lives in Porto'), 'Marta lives in Porto', 'no corrections, nothing marked');
});

test('questions about before are told from questions about now', () => {
  for (const q of ['where did Marta live before?', 'what was my old job', 'where did I use to live', 'previously, which city?'])
    assert.ok(asksAboutBefore(q), q);
  for (const q of ['where does Marta live?', 'what is my job', 'which city is Marta in']) assert.ok(!asksAboutBefore(q), q);
});

test('rankBelow moves a stale hit down to where half its score places it; the others keep their order and nothing moves up', () => {
  const list = [
    { id: 'porto', score: 1.3 },
    { id: 'braga', score: 1.2 },
    { id: 'q', score: 0.7 },
    { id: 'x', score: 0.6 },
    { id: 'y', score: 0.2 },
  ];
  assert.deepEqual(
    rankBelow(list, (h) => h.id === 'porto').map((h) => h.id),
    ['braga', 'q', 'porto', 'x', 'y'],
  );
  assert.deepEqual(
    rankBelow(list, (h) => h.id === 'y').map((h) => h.id),
    ['porto', 'braga', 'q', 'x', 'y'],
  );
});
