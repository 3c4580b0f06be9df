/**
 * Importance scoring (src/memory/importance.ts, seed 004): what truncation keeps when no summary
 * can be had. Each rule is checked on its own, so a changed weight or pattern shows here and not
 * only as a different transcript in the compaction tests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildUnits, chooseDrops, scoreMessage, type Unit } from '../../src/memory/importance.js';
import { makeMessage } from '../../src/sessions/model.js';
import type { SessionMessage } from '../../src/sessions/model.js';

const NOW = Date.parse('2026-03-10T12:00:00Z');
const at = (daysAgo: number) => new Date(NOW - daysAgo * 86_400_000).toISOString();
const msg = (role: SessionMessage['role'], content: string, daysAgo = 0, extra: Partial<SessionMessage> = {}) =>
  makeMessage(role, content, { timestamp: at(daysAgo), ...extra });

test('a directive, an error or a correction scores above small talk; the newest messages score higher', () => {
  const far = 30; // out of the "last 20" boost
  const plain = scoreMessage(msg('user', 'the weather was fine'), far, NOW);
  assert.ok(scoreMessage(msg('user', 'From now on call me Sam'), far, NOW) > plain, 'directive');
  assert.ok(scoreMessage(msg('assistant', 'The build failed with an exception'), far, NOW) > plain, 'error');
  assert.ok(scoreMessage(msg('user', 'Actually I meant Tuesday'), far, NOW) > plain, 'correction');
  assert.ok(scoreMessage(msg('user', 'thanks!'), far, NOW) < plain, 'small talk');
  // A directive only counts from the user: the model repeating "always" is not an instruction.
  assert.equal(scoreMessage(msg('assistant', 'I will always answer briefly'), far, NOW), plain);
  assert.ok(scoreMessage(msg('user', 'the weather was fine'), 3, NOW) > scoreMessage(msg('user', 'the weather was fine'), 15, NOW), 'recency');
});

test('older messages lose score by whole days; system messages and scores stay within 0..1', () => {
  const today = scoreMessage(msg('user', 'the weather was fine', 0), 30, NOW);
  assert.equal(scoreMessage(msg('user', 'the weather was fine', 0.9), 30, NOW), today, 'less than a day: no loss');
  assert.ok(Math.abs(scoreMessage(msg('user', 'the weather was fine', 2), 30, NOW) - (today - 0.2)) < 1e-9);
  assert.equal(scoreMessage(msg('user', 'the weather was fine', 400), 30, NOW), 0);
  assert.equal(scoreMessage(msg('system', 'summary'), 1000, NOW), 1);
  const loud = msg('user', 'Always remember: the error crashed, actually I meant the bug', 0, { toolCalls: [] });
  assert.equal(scoreMessage(loud, 1, NOW), 1);
});

test('exchanges are grouped from one user message to the next; directives and error → correction pairs are protected', () => {
  const messages = [
    msg('system', 'summary of earlier'),
    msg('user', 'hi'),
    msg('assistant', 'hello'),
    msg('user', 'Please use metric units from now on'),
    msg('assistant', 'Will do'),
    msg('user', 'run it'),
    msg('assistant', 'It failed with an error'),
    msg('user', 'Actually the file is called notes.txt'),
    msg('assistant', 'Found it'),
  ];
  const units = buildUnits(messages, NOW);
  assert.deepEqual(
    units.map((u) => u.indices),
    [
      [1, 2],
      [3, 4],
      [5, 6],
      [7, 8],
    ],
    'the system message belongs to no exchange',
  );
  assert.deepEqual(
    units.map((u) => u.protected),
    [false, true, true, true],
  );
});

test('drops go lowest score first, oldest first on ties, whole exchanges; protected ones only under a hard limit', () => {
  const units: Unit[] = [
    { indices: [0, 1], score: 0.5, protected: false },
    { indices: [2, 3], score: 0.2, protected: false },
    { indices: [4, 5], score: 0.9, protected: true },
    { indices: [6, 7], score: 0.2, protected: false },
  ];
  const cost = () => 10;
  assert.deepEqual([...chooseDrops(units, cost, 15, false)], [2, 3, 6, 7], 'the two lowest, the older first');
  assert.deepEqual([...chooseDrops(units, cost, 35, false)], [2, 3, 6, 7, 0, 1], 'protected stays whatever the excess');
  assert.deepEqual([...chooseDrops(units, cost, 35, true)], [2, 3, 6, 7, 0, 1, 4, 5], 'a hard limit takes it last');
  assert.deepEqual([...chooseDrops(units, cost, 0, true)], []);
});
