// Helpers shared by the fact kinds: building parts and questions, and phrasing a day
// relative to the message that mentions it ("yesterday", "on Saturday", "on the 14th").

import type { Ctx, EventDef, Part, QDraft, QTemplate, Turn } from './types.js';
import { addDays, cap, dayMonth, daysBetween, ordinal, wdDayMonth, weekday, type Who } from './util.js';

export { cap };

/** Third-person vs second-person wording: v(w, 'plays', 'play'). */
export const v = (w: Who, third: string, second: string): string => (w.third ? third : second);

/**
 * A user message (tagged, so questions can point at it) and the assistant's reply.
 * «a|b» alternatives are resolved; the user text may get a casual lead-in.
 */
export function pair(c: Ctx, s: number, user: string, bot: string, tag?: string, lead = true): Part {
  const text = cap(c.t(user));
  const u: Turn = { role: 'user', text: lead ? c.lead(text) : text };
  if (tag) u.tag = tag;
  return { session: s, turns: [u, { role: 'assistant', text: cap(c.t(bot)) }] };
}

/** Several alternating turns (user first) in one block; tags[i] tags turn i. */
export function chain(c: Ctx, s: number, texts: readonly string[], tags: Record<number, string> = {}): Part {
  const turns: Turn[] = texts.map((x, i) => {
    const t: Turn = { role: i % 2 === 0 ? 'user' : 'assistant', text: c.t(x) };
    const tag = tags[i];
    if (tag) t.tag = tag;
    return t;
  });
  return { session: s, turns };
}

/** Picks a user template and the bot reply written for it (same index, wrapping). */
export function pick2(c: Ctx, users: readonly string[], bots: readonly string[]): [string, string] {
  const i = c.r.int(0, users.length - 1);
  return [users[i] ?? '', bots[i % bots.length] ?? ''];
}

export function qd(cat: string, ev: string[], answer: string, ...q: QTemplate[]): QDraft {
  return { cat, ev, answer, q };
}

/** "Saturday 16 March 2024" */
export const dateText = (d: Date): string => `${wdDayMonth(d)} ${d.getUTCFullYear()}`;

export interface When {
  phrase: string;
  date: Date;
  precise: boolean;
}

/** A day 0..maxBack days before session s's day, phrased relative to it. */
export function pastWhen(c: Ctx, s: number, minBack = 0, maxBack = 6): When {
  const base = c.date(s);
  const back = c.r.int(minBack, maxBack);
  const date = addDays(base, -back);
  const opts: string[] = [];
  if (back === 0) opts.push('today', 'today');
  if (back === 1) opts.push('yesterday', 'yesterday', `on ${weekday(date)}`);
  if (back >= 2) opts.push(`on ${weekday(date)}`, `last ${weekday(date)}`, `on ${weekday(date)} the ${ordinal(date.getUTCDate())}`);
  return { phrase: c.r.pick(opts), date, precise: true };
}

/** A day minAhead..maxAhead days after session s's day, phrased relative to it. */
export function futureWhen(c: Ctx, s: number, minAhead = 1, maxAhead = 20): When {
  const base = c.date(s);
  const ahead = c.r.int(minAhead, maxAhead);
  const date = addDays(base, ahead);
  const opts: string[] = [];
  if (ahead === 1) opts.push('tomorrow', 'tomorrow');
  if (ahead >= 2 && ahead <= 6) opts.push(`on ${weekday(date)}`, `this ${weekday(date)}`);
  if (ahead >= 2) opts.push(`on ${wdDayMonth(date)}`, `on the ${ordinal(date.getUTCDate())}`);
  if (ahead >= 7) opts.push(`on ${dayMonth(date)}`, `on ${weekday(date)} the ${ordinal(date.getUTCDate())}`);
  return { phrase: c.r.pick(opts), date, precise: true };
}

/** Answer text for a date question, showing how it follows from the message day. */
export function dateAnswer(c: Ctx, s: number, w: When): string {
  const d = daysBetween(c.date(s), w.date);
  const rel =
    d === 0
      ? 'the day of the message'
      : d < 0
        ? `${-d} day${d === -1 ? '' : 's'} before the message of ${dayMonth(c.date(s))}`
        : `stated on ${dayMonth(c.date(s))}`;
  return `${dateText(w.date)} (${rel})`;
}

/** An EventDef from four verb forms given as functions of the person. */
export function ev(tag: string, date: Date, base: QTemplate, past: QTemplate, ger: QTemplate, precise = true): EventDef {
  return { tag, date, precise, base, past, pp: past, ger };
}
