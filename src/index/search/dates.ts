/**
 * Calendar dates named in a question ("on 29 Dec 2023", "December 3rd", "2024-05-08", "16.01.2024",
 * "in March 2024"), as ranges of event time. Search boosts the messages written inside them:
 * "what did we cook on 12 May?" is about what was said that day, whatever words it used.
 * Relative phrases ("yesterday") are left to the model, which knows today's date.
 */

const MONTHS: Record<string, number> = {
  january: 0,
  jan: 0,
  february: 1,
  feb: 1,
  march: 2,
  mar: 2,
  april: 3,
  apr: 3,
  may: 4,
  june: 5,
  jun: 5,
  july: 6,
  jul: 6,
  august: 7,
  aug: 7,
  september: 8,
  sep: 8,
  sept: 8,
  october: 9,
  oct: 9,
  november: 10,
  nov: 10,
  december: 11,
  dec: 11,
};
const MONTH = Object.keys(MONTHS)
  .sort((a, b) => b.length - a.length)
  .join('|');
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?';
const YEAR = '(\\d{4})';

const ISO = /\b(\d{4})-(\d{2})-(\d{2})\b/g;
/** Day first with dots, as most of Europe writes it: 16.01.2024. */
const DOTTED = /\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b/g;
const DAY_MONTH = new RegExp(`\\b${DAY}(?:\\s+of)?\\s+(${MONTH})\\.?(?:,?\\s+${YEAR})?\\b`, 'gi');
const MONTH_DAY = new RegExp(`\\b(${MONTH})\\.?\\s+${DAY}\\b(?:,?\\s+${YEAR})?`, 'gi');
const MONTH_YEAR = new RegExp(`\\b(${MONTH})\\.?,?\\s+${YEAR}\\b`, 'gi');

export interface DateRange {
  /** Seconds since the epoch, inclusive. */
  from: number;
  /** Seconds since the epoch, exclusive. */
  to: number;
  /** True for a whole month ("in March 2024"), false for one day. */
  month: boolean;
}

/** A day or month in local time, widened by half a day on each side for time zones. */
function range(y: number, m: number, d: number | null): DateRange | null {
  if (m < 0 || m > 11 || (d !== null && (d < 1 || d > 31))) return null;
  const start = new Date(y, m, d ?? 1).getTime();
  const end = d === null ? new Date(y, m + 1, 1).getTime() : new Date(y, m, d + 1).getTime();
  if (!Number.isFinite(start)) return null;
  const slack = 12 * 3600_000;
  return { from: Math.floor((start - slack) / 1000), to: Math.floor((end + slack) / 1000), month: d === null };
}

/**
 * The dates a query names. A day without a year stands for that day in each year the chat's
 * memories cover (`years`, oldest first; at most the last five). `years` may be a function: it
 * is then called only when the query names a day without a year (it costs a read of the index).
 */
export function datesIn(query: string, years: number[] | (() => number[])): DateRange[] {
  const out: DateRange[] = [];
  const taken: Array<[number, number]> = [];
  const free = (i: number, n: number) => !taken.some(([a, b]) => i < b && a < i + n);
  const add = (r: DateRange | null, i: number, n: number) => {
    if (!r) return;
    taken.push([i, i + n]);
    if (!out.some((o) => o.from === r.from && o.to === r.to)) out.push(r);
  };
  let known: number[] | undefined;
  const yearsFor = (y: string | undefined) => (y ? [Number(y)] : (known ??= typeof years === 'function' ? years() : years).slice(-5));
  for (const m of query.matchAll(ISO)) add(range(Number(m[1]), Number(m[2]) - 1, Number(m[3])), m.index!, m[0].length);
  for (const m of query.matchAll(DOTTED)) add(range(Number(m[3]), Number(m[2]) - 1, Number(m[1])), m.index!, m[0].length);
  for (const m of query.matchAll(DAY_MONTH)) {
    if (!free(m.index!, m[0].length)) continue;
    for (const y of yearsFor(m[3])) add(range(y, MONTHS[m[2]!.toLowerCase()]!, Number(m[1])), m.index!, m[0].length);
  }
  for (const m of query.matchAll(MONTH_DAY)) {
    if (!free(m.index!, m[0].length)) continue;
    // "May 2024" is a month, not the 20th of May: a day has at most two digits.
    for (const y of yearsFor(m[3])) add(range(y, MONTHS[m[1]!.toLowerCase()]!, Number(m[2])), m.index!, m[0].length);
  }
  for (const m of query.matchAll(MONTH_YEAR)) {
    if (!free(m.index!, m[0].length)) continue;
    add(range(Number(m[2]), MONTHS[m[1]!.toLowerCase()]!, null), m.index!, m[0].length);
  }
  return out.slice(0, 8);
}
