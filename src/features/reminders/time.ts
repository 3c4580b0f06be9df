/**
 * Times of reminders: a strict reading of the model's ISO 8601 `at` (an offset is required, so
 * "09:00" can never silently mean UTC), the repeat rules (daily, weekly, or a cron expression
 * evaluated by node-cron in the chat's time zone), and how a time is said back to the user.
 */
import cron from 'node-cron';
import { addDays, format } from 'date-fns';
import { TZDate } from '@date-fns/tz';
import { LRUCache } from 'lru-cache';

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
  if (r.split(/\s+/).length !== 5 || !cron.validate(r) || !parses(r)) {
    return { ok: false, reason: `repeat "${raw}" is not "daily", "weekly" or a 5-field cron expression (minute hour day month weekday, e.g. "30 8 * * 1-5")` };
  }
  return { ok: true, repeat: { cron: r } };
}

/** Where `parses` asks for a first fire: any date would do, the calendar repeats. */
const FIRES_FROM = Date.UTC(2000, 0, 1);

/**
 * node-cron validates field by field; a day no month has ("30 2") is refused only when a task is
 * made, and a day rule no date meets ("31 * 1#1": the 31st is never a first Monday) only when
 * the next fire is asked (it looks 100 years ahead, more than the calendar's 28-year cycle).
 */
function parses(expr: string): boolean {
  try {
    matcherOf(expr, 'UTC').getNextMatch(new Date(FIRES_FROM));
    return true;
  } catch {
    return false;
  }
}

export function repeatToString(r: Repeat): string {
  return typeof r === 'string' ? r : r.cron;
}

export function repeatFromString(s: string | null): Repeat | null {
  if (!s) return null;
  const p = parseRepeat(s);
  return p.ok ? p.repeat : null;
}

/** node-cron's matcher of an expression in a zone (the parsed fields and the next-match walk). */
interface CronMatcher {
  /** Seconds, minutes, hours, day of month, month, weekday: the values each field allows. */
  expressions: Array<Array<number | string>>;
  getNextMatch(d: Date): Date;
}

/** Matchers, kept per expression and zone (creating one parses it). */
const matchers = new LRUCache<string, CronMatcher>({ max: 500 });

function matcherOf(expr: string, timezone: string): CronMatcher {
  const key = `${timezone} ${expr}`;
  let matcher = matchers.get(key);
  if (!matcher) {
    // A task that is never started: only its time matcher is used (node-cron computes the next
    // match in the zone, DST included); destroyed at once so node-cron keeps no reference.
    const task = cron.createTask(expr, () => undefined, { timezone });
    matcher = (task as unknown as { timeMatcher: CronMatcher }).timeMatcher;
    void task.destroy();
    matchers.set(key, matcher);
  }
  return matcher;
}

function cronNext(expr: string, timezone: string, after: number): number {
  return matcherOf(expr, timezone).getNextMatch(new Date(after)).getTime();
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

const DAY_MS = 24 * 3600 * 1000;
/**
 * How far ahead a repeat's firing days are walked: 28 years, the Gregorian calendar's cycle of
 * leap days and weekdays (1901–2099), so a rare day (29 February, 29 February on a Monday) is
 * met, with its clock change or its neighbour day. The walk stops sooner, after
 * RATE_FIRING_DAYS firing days: a year's worth for a daily repeat.
 */
export const RATE_HORIZON_MS = 28 * 365.25 * DAY_MS;
const RATE_FIRING_DAYS = 366;

/**
 * A reason when a repeat fires more often than every MIN_REPEAT_GAP_MS on any of its days;
 * null when it is fine. Only the repeat's own times count, not the gap from `first` (the `at`
 * of the reminder) to its first match.
 */
export function tooFrequent(repeat: Repeat, timezone: string, first: number): string | null {
  if (typeof repeat === 'string') return null;
  const gap = shortestGap(repeat.cron, timezone, first, first + RATE_HORIZON_MS);
  if (gap === null || gap >= MIN_REPEAT_GAP_MS) return null;
  const every = gap <= 60_000 ? 'minute' : `${Math.round(gap / 60_000)} minutes`;
  return `repeat "${repeat.cron}" would fire more often than every ${MIN_REPEAT_GAP_MS / 60_000} minutes (every ${every} at times)`;
}

/**
 * The shortest time between two consecutive fires of a 5-field cron expression, as node-cron
 * fires it in `timezone`; null when it fires at most once.
 *
 * The expression's times of day are the same on every day it fires, so their shortest gap counts
 * whichever day that is — even one years away ("* * 29 2 *" fires every minute of its day, and is
 * judged so before any 29 February comes near). What depends on the day is walked, by firing day
 * in [from, until) and at most RATE_FIRING_DAYS of them: the gap from one firing day to the next
 * (its first fire minus the last one before), and the real fires of a day the clock changes, since
 * a skipped hour can bring two fires closer than the times say (01:55 and 03:05 on the spring
 * night are 10 minutes apart). Walking every fire instead would take ~1 s for a quarter-hourly
 * expression (35,000 matches a year), too long for a tool call on the one event loop.
 */
export function shortestGap(expr: string, timezone: string, from: number, until: number): number | null {
  const fields = expr.trim().split(/\s+/);
  const fires = matcherOf(expr, timezone);
  const [, minutes, hours] = fires.expressions as [unknown, number[], number[]];
  const times = hours.flatMap((h) => minutes.map((m) => (h * 60 + m) * 60_000)).sort((a, b) => a - b);
  let withinDay = Number.POSITIVE_INFINITY;
  for (let i = 1; i < times.length; i++) withinDay = Math.min(withinDay, times[i]! - times[i - 1]!);
  if (withinDay < MIN_REPEAT_GAP_MS) return withinDay;
  // The days it fires on: node-cron's own day, month and weekday rules, matched at noon.
  const days = matcherOf(`0 0 12 ${fields[2]} ${fields[3]} ${fields[4]}`, timezone);
  const nextDay = (after: number): number => days.getNextMatch(new Date(after)).getTime();
  let best = withinDay;
  let fired = 0;
  let walked = 0;
  let previousLast: number | undefined;
  let noon = nextDay(startOfDay(from, timezone) - 1);
  while (noon < until && walked < RATE_FIRING_DAYS && best >= MIN_REPEAT_GAP_MS) {
    walked++;
    const dayStart = startOfDay(noon, timezone);
    const dayEnd = addDays(new TZDate(dayStart, timezone), 1).getTime();
    let firstFire: number;
    let lastFire: number;
    if (dayEnd - dayStart === DAY_MS) {
      firstFire = dayStart + times[0]!;
      lastFire = dayStart + times.at(-1)!;
      fired += times.length;
    } else {
      const real: number[] = [];
      for (
        let t = fires.getNextMatch(new Date(dayStart - 1000)).getTime();
        t < dayEnd && real.length <= times.length + 1;
        t = fires.getNextMatch(new Date(t)).getTime()
      )
        real.push(t);
      if (real.length === 0) {
        noon = nextDay(noon);
        continue;
      }
      for (let i = 1; i < real.length; i++) best = Math.min(best, real[i]! - real[i - 1]!);
      [firstFire, lastFire] = [real[0]!, real.at(-1)!];
      fired += real.length;
    }
    if (previousLast !== undefined) best = Math.min(best, firstFire - previousLast);
    previousLast = lastFire;
    noon = nextDay(noon);
  }
  return fired > 1 ? best : null;
}

function startOfDay(ms: number, timezone: string): number {
  const d = new TZDate(ms, timezone);
  return new TZDate(d.getFullYear(), d.getMonth(), d.getDate(), 0, 0, 0, timezone).getTime();
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
