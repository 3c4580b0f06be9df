/** Daily-note lines in the seed's exact format, with dates and times in the configured zone. */
import { format, subDays } from 'date-fns';
import { TZDate } from '@date-fns/tz';

export const USER_NOTE_CHARS = 200;
export const ASSISTANT_NOTE_CHARS = 300;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * Cuts to `max` characters, counted as user-perceived characters (grapheme clusters), so a
 * flag or a ZWJ family emoji is kept whole or dropped whole, never split.
 */
export function cutChars(text: string, max: number): string {
  // Fast path: no text of at most `max` UTF-16 units can have more than `max` graphemes.
  if (text.length <= max) return text;
  // Segmenting costs time for the whole text given, not just the part read: a 200,000-character
  // answer cost ~0.2 s per cut. A prefix is segmented instead, longer until it holds more than
  // `max` graphemes (then the first `max` are whole); rarely more than one round.
  for (let prefix = max * 4 + 16; ; prefix *= 4) {
    const part = prefix >= text.length ? text : text.slice(0, prefix);
    let out = '';
    let n = 0;
    for (const { segment } of graphemes.segment(part)) {
      if (++n > max) return out;
      out += segment;
    }
    if (part === text) return out;
  }
}

export function oneLine(text: string): string {
  return text.replace(/\r\n|\r|\n/g, ' ');
}

/** A note line without its `[HH:mm] ` time: what identifies the exchange it records. */
export function noteBody(user: string, assistant: string): string {
  return `User: ${oneLine(cutChars(user, USER_NOTE_CHARS))} | Assistant: ${oneLine(cutChars(assistant, ASSISTANT_NOTE_CHARS))}`;
}

/** `[HH:mm] User: {text} | Assistant: {text}` — user cut to 200 chars, assistant to 300. */
export function formatNoteLine(at: Date, timezone: string, user: string, assistant: string): string {
  const time = format(new TZDate(at.getTime(), timezone), 'HH:mm');
  return `[${time}] ${noteBody(user, assistant)}`;
}

/**
 * `[HH:mm] Reminder (set by a user): {text}` — a delivered reminder, cut to 300 chars. Not
 * "Assistant": notes reach the prompt, and the words are a user's (sessions/model.ts reminderNote).
 */
export function formatReminderLine(at: Date, timezone: string, text: string): string {
  const time = format(new TZDate(at.getTime(), timezone), 'HH:mm');
  return `[${time}] Reminder (set by a user): ${oneLine(cutChars(text, ASSISTANT_NOTE_CHARS))}`;
}

/** The body of a note line (`[HH:mm] ` stripped), or undefined for a line of another shape. */
export function noteLineBody(line: string): string | undefined {
  const m = /^\[\d\d:\d\d\] (User: .*)$/.exec(line);
  return m?.[1];
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
