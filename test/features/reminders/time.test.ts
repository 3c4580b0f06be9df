/** Reminder times: the strict reading of `at`, and repeats that keep the wall-clock time across DST. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextAfter, nextOccurrence, parseAt, parseRepeat } from '../../../src/features/reminders/time.js';

const iso = (ms: number) => new Date(ms).toISOString();

test('a daily 09:00 in Berlin stays 09:00 across the spring and autumn DST changes; weekly and cron follow the zone too', () => {
  const spring = Date.parse('2026-03-28T08:00:00Z'); // Sat 09:00 CET
  assert.equal(iso(nextOccurrence('daily', 'Europe/Berlin', spring)), '2026-03-29T07:00:00.000Z'); // Sun 09:00 CEST
  const autumn = Date.parse('2026-10-24T07:00:00Z'); // Sat 09:00 CEST
  assert.equal(iso(nextOccurrence('daily', 'Europe/Berlin', autumn)), '2026-10-25T08:00:00.000Z'); // Sun 09:00 CET
  assert.equal(iso(nextOccurrence('weekly', 'Europe/Berlin', spring)), '2026-04-04T07:00:00.000Z');
  const weekdays = parseRepeat('30 8 * * 1-5');
  assert.ok(weekdays.ok);
  // Friday 08:30 → Monday 08:30 (after the weekend), in Berlin time.
  assert.equal(iso(nextOccurrence(weekdays.repeat, 'Europe/Berlin', Date.parse('2026-03-27T07:30:00Z'))), '2026-03-30T06:30:00.000Z');
  // Missed for days: the first time after now.
  assert.equal(iso(nextAfter('daily', 'UTC', Date.parse('2026-01-01T09:00:00Z'), Date.parse('2026-01-05T10:00:00Z'))), '2026-01-06T09:00:00.000Z');
});

test('`at` must be a real ISO 8601 date-time with an offset', () => {
  assert.deepEqual(parseAt('2026-11-23T09:00:00+01:00'), { ok: true, ms: Date.parse('2026-11-23T08:00:00Z') });
  assert.deepEqual(parseAt('2026-11-23T09:00Z'), { ok: true, ms: Date.parse('2026-11-23T09:00:00Z') });
  assert.deepEqual(parseAt('2026-11-23 09:00:00-0530'), { ok: true, ms: Date.parse('2026-11-23T14:30:00Z') });
  for (const bad of ['2026-11-23T09:00:00', '2026-02-29T09:00:00Z', '2026-11-23T24:00:00Z', '2026-11-23T09:00:00+15:00', 'next tuesday', '']) {
    assert.equal(parseAt(bad).ok, false, bad);
  }
  assert.ok(parseAt('2028-02-29T09:00:00Z').ok, 'a leap day is real');
});
