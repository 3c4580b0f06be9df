/**
 * Times of reminders: a strict reading of the model's ISO 8601 `at` (an offset is required, so
 * "09:00" can never silently mean UTC), the repeat rules (daily, weekly, or a cron expression
 * evaluated by node-cron in the chat's time zone), and how a time is said back to the user.
 */
import cron from 'node-cron';
import { addDays, format } from 'date-fns';
import { TZDate } from '@date-fns/tz';

/** Reminders further ahead than this are refused (a typo in the year, most likely). */
export const MAX_AHEAD_MS = 5 * 366 * 24 * 3600 * 1000;
/** A repeating reminder may not fire more often than this (a cron typo would flood the chat). */
export const MIN_REPEAT_GAP_MS = 15 * 60 * 1000;

const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)$/;

export type ParsedTime = { ok: true; ms: number } | { ok: false; reason: string };

/** Reads `2026-11-23T09:00:00+01:00` (seconds optional, `Z` allowed); anything else gets a reason. */
export function parseAt(at: string): ParsedTime {
  const m = ISO.exec(at.trim());
  if (!m) {
    const noOffset = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(at.trim());
    return {
      ok: false,
      reason: noOffset
        ? `"${at}" has no UTC offset; add the user's offset, e.g. ${at.trim()}+01:00`
        : `"${at}" is not an ISO 8601 date-time with offset such as 2026-11-23T09:00:00+01:00`,
    };
  }
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth || h > 23 || mi > 59 || s > 59) return { ok: false, reason: `"${at}" is not a real date or time` };
  let offsetMin = 0;
  const off = m[8]!;
  if (off !== 'Z' && off !== 'z') {
    const sign = off[0] === '-' ? -1 : 1;
    const digits = off.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2) || '0');
    if (oh > 14 || om > 59) return { ok: false, reason: `"${off}" is not a valid UTC offset` };
    offsetMin = sign * (oh * 60 + om);
  }
  const ms = Date.UTC(y, mo - 1, d, h, mi, s) - offsetMin * 60_000;
  return { ok: true, ms };
}

export type Repeat = 'daily' | 'weekly' | { cron: string };

/** `daily`, `weekly` or a 5-field cron expression (`30 8 * * 1-5`); a reason otherwise. */
export function parseRepeat(raw: string): { ok: true; repeat: Repeat } | { ok: false; reason: string } {
  const r = raw.trim();
  if (/^daily$/i.test(r)) return { ok: true, repeat: 'daily' };
  if (/^weekly$/i.test(r)) return { ok: true, repeat: 'weekly' };
  if (r.split(/\s+/).length !== 5 || !cron.validate(r)) {
    return { ok: false, reason: `repeat "${raw}" is not "daily", "weekly" or a 5-field cron expression (minute hour day month weekday, e.g. "30 8 * * 1-5")` };
  }
  return { ok: true, repeat: { cron: r } };
}

export function repeatToString(r: Repeat): string {
  return typeof r === 'string' ? r : r.cron;
}

export function repeatFromString(s: string | null): Repeat | null {
  if (!s) return null;
  const p = parseRepeat(s);
  return p.ok ? p.repeat : null;
}

/** node-cron's matcher for an expression, kept per expression and zone (creating one parses it). */
const matchers = new Map<string, { getNextMatch(d: Date): Date }>();

function cronNext(expr: string, timezone: string, after: number): number {
  const key = `${timezone} ${expr}`;
  let matcher = matchers.get(key);
  if (!matcher) {
    // A task that is never started: only its time matcher is used (node-cron computes the next
    // match in the zone, DST included); destroyed at once so node-cron keeps no reference.
    const task = cron.createTask(expr, () => undefined, { timezone });
    matcher = (task as unknown as { timeMatcher: { getNextMatch(d: Date): Date } }).timeMatcher;
    void task.destroy();
    if (matchers.size > 500) matchers.clear();
    matchers.set(key, matcher);
  }
  return matcher.getNextMatch(new Date(after)).getTime();
}

/** The occurrence after `prev`: the same wall-clock time a day or a week later (DST-safe), or the next cron match. */
export function nextOccurrence(repeat: Repeat, timezone: string, prev: number): number {
  if (repeat === 'daily' || repeat === 'weekly') return addDays(new TZDate(prev, timezone), repeat === 'daily' ? 1 : 7).getTime();
  return cronNext(repeat.cron, timezone, prev);
}

/** The first occurrence strictly after `now`, starting from `due`. */
export function nextAfter(repeat: Repeat, timezone: string, due: number, now: number): number {
  let n = nextOccurrence(repeat, timezone, due);
  while (n <= now) n = nextOccurrence(repeat, timezone, n);
  return n;
}

/** A reason when a repeat would fire more often than MIN_REPEAT_GAP_MS; null when it is fine. */
export function tooFrequent(repeat: Repeat, timezone: string, first: number): string | null {
  if (typeof repeat === 'string') return null;
  // Gaps over the first week (patterns repeat by weekday) or 200 occurrences, whichever ends first.
  let prev = first;
  for (let i = 0; i < 200 && prev - first < 8 * 24 * 3600 * 1000; i++) {
    const next = cronNext(repeat.cron, timezone, prev);
    if (next - prev < MIN_REPEAT_GAP_MS) return `repeat "${repeat.cron}" would fire more often than every ${MIN_REPEAT_GAP_MS / 60_000} minutes`;
    prev = next;
  }
  return null;
}

/** "Monday 23 November 2026, 09:00 (Europe/Berlin, UTC+01:00)" */
export function describeTime(ms: number, timezone: string): string {
  const d = new TZDate(ms, timezone);
  return `${format(d, 'EEEE d MMMM yyyy, HH:mm')} (${timezone}, UTC${format(d, 'xxx')})`;
}

/** "Mon 23 Nov 2026, 09:00" — for lists. */
export function shortTime(ms: number, timezone: string): string {
  return format(new TZDate(ms, timezone), 'EEE d MMM yyyy, HH:mm');
}

/** ISO 8601 with the zone's offset: what the model gets back to reason with. */
export function isoIn(ms: number, timezone: string): string {
  return format(new TZDate(ms, timezone), "yyyy-MM-dd'T'HH:mm:ssxxx");
}
