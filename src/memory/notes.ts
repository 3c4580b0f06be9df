/** Daily-note lines in the seed's exact format, with dates and times in the configured zone. */
import { format, subDays } from 'date-fns';
import { TZDate } from '@date-fns/tz';

export const USER_NOTE_CHARS = 200;
export const ASSISTANT_NOTE_CHARS = 300;

/** Cuts to `max` characters (code points, so an emoji is never split in half). */
export function cutChars(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max).join('');
}

function oneLine(text: string): string {
  return text.replace(/\r\n|\r|\n/g, ' ');
}

/** `[HH:mm] User: {text} | Assistant: {text}` — user cut to 200 chars, assistant to 300. */
export function formatNoteLine(at: Date, timezone: string, user: string, assistant: string): string {
  const time = format(new TZDate(at.getTime(), timezone), 'HH:mm');
  return `[${time}] User: ${oneLine(cutChars(user, USER_NOTE_CHARS))} | Assistant: ${oneLine(cutChars(assistant, ASSISTANT_NOTE_CHARS))}`;
}

/** The calendar date (YYYY-MM-DD) of `at` in `timezone`. */
export function localDate(at: Date, timezone: string): string {
  return format(new TZDate(at.getTime(), timezone), 'yyyy-MM-dd');
}

/** The `n` calendar days before `date` (YYYY-MM-DD), newest first. */
export function previousDays(date: string, n: number): string[] {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const base = new Date(y, m - 1, d, 12); // noon: safe from DST edges
  const out: string[] = [];
  for (let i = 1; i <= n; i++) out.push(format(subDays(base, i), 'yyyy-MM-dd'));
  return out;
}
