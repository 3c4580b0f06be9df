// The timeline of one conversation (which days have a chat session, when it starts, how
// long it is) and the planning context the fact kinds use to place their messages.

import type { Ctx } from './types.js';
import { FILLER, FILLER_POOLS, OPENER_REPLIES, CLOSERS, OPENERS } from './filler.js';
import { FEMALE, MALE, type PersonaSetup } from './personas.js';
import { addDays, at, daysBetween, render, type Rng } from './util.js';

export interface Session {
  /** 1-based; message ids are D<n>:<i>. */
  n: number;
  date: Date;
  /** Start time, minutes after 00:00 UTC. */
  startMin: number;
  slot: 'morning' | 'day' | 'evening';
  /** Target number of messages (planted + filler), 10..40. */
  size: number;
}

/** 20–24 sessions on distinct days spread over 43–68 days (6–10 weeks). */
export function makeTimeline(p: PersonaSetup, r: Rng): Session[] {
  const start = new Date(`${p.start}T00:00:00Z`);
  const span = r.int(43, 68);
  const count = r.int(20, 24);
  const days = new Set<number>([0, span]);
  while (days.size < count) days.add(r.int(1, span - 1));
  const sorted = [...days].sort((a, b) => a - b);
  return sorted.map((d, i) => {
    const slot = r.pick(['morning', 'day', 'day', 'evening', 'evening'] as const);
    const startMin = slot === 'morning' ? r.int(7 * 60, 9 * 60 + 30) : slot === 'day' ? r.int(11 * 60 + 30, 15 * 60) : r.int(18 * 60, 21 * 60);
    return { n: i + 1, date: addDays(start, d), startMin, slot, size: r.int(13, 30) };
  });
}

/** All filler text, lower-cased: planted names must never occur in it. */
export function fillerCorpus(): string {
  const out: string[] = [];
  for (const ex of FILLER) out.push(...ex.t);
  for (const pool of Object.values(FILLER_POOLS)) out.push(...pool);
  for (const list of Object.values(OPENERS)) out.push(...list);
  out.push(...OPENER_REPLIES);
  for (const pair of CLOSERS) out.push(...pair);
  return out.join('\n').toLowerCase();
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** true when `value` occurs as a whole word or phrase in `corpus` (lower-case). */
export const occursIn = (corpus: string, value: string): boolean => new RegExp(`(^|[^\\p{L}])${esc(value.toLowerCase())}($|[^\\p{L}])`, 'u').test(corpus);

const LEADS = [
  'Oh, news: ',
  'Random update — ',
  'Before I forget: ',
  'Small update: ',
  'Quick life update: ',
  'Guess what? ',
  'Not a question, just sharing: ',
  'News! ',
];
/** Lead-ins that run into the sentence, used only when its first word can be lower-cased. */
const FLOW = ['Oh and ', 'Ok so ', 'Btw ', 'Also, ', 'So ', 'Anyway, '];
const STARTERS =
  /^(My|We|Our|The|Just|Finally|Got|Had|Been|Started|Booked|This|That|There|Today|Yesterday|Went|Did|Last|A|An|It's|So|Turns|Spent|Signed|Picked)\b/;
const TRAILS = [' Anyway!', " Just thought I'd mention it.", ' 😊', ' Exciting times.', ' Life, eh.', ' Anyway, how are you?'];

export interface PlanCtx extends Ctx {
  /** Planted turns per session (index = session number). */
  load: number[];
  sessions: Session[];
  /** true when day d lies inside a trip away (see block). */
  away(d: Date): boolean;
  /** Names reserved for the filler's {coworker} / {friend} slots. */
  coworkers: string[];
  friends: string[];
}

export function makeCtx(p: PersonaSetup, sessions: Session[], r: Rng, corpus: string): PlanCtx {
  const n = sessions.length;
  const load = new Array<number>(n + 1).fill(0);
  const used = new Set<string>([p.name, p.home]);
  let tagCount = 0;
  const ok = (v: string) => !used.has(v) && !occursIn(corpus, v) && ![...used].some((u) => occursIn(u.toLowerCase(), v) || occursIn(v.toLowerCase(), u));
  const take = (pool: readonly string[]): string => {
    const cands = pool.filter(ok);
    if (!cands.length) throw new Error(`pool exhausted: ${pool.slice(0, 3).join(', ')}…`);
    const v = r.pick(cands);
    used.add(v);
    return v;
  };
  const frac = (s: number) => (n === 1 ? 0 : (s - 1) / (n - 1));
  const blocked = new Set<string>();
  const claimed = new Set<string>();
  const dayKey = (d: Date) => d.toISOString().slice(0, 10);
  const inRange = (lo: number, hi: number) => {
    const open = sessions.filter((x) => !blocked.has(dayKey(x.date)));
    const c = open.filter((x) => frac(x.n) >= lo - 1e-9 && frac(x.n) <= hi + 1e-9).map((x) => x.n);
    return c.length ? c : open.map((x) => x.n);
  };
  const coworkers = [take(r.chance(0.5) ? FEMALE : MALE), take(r.chance(0.5) ? FEMALE : MALE)];
  const friends = [take(r.chance(0.5) ? FEMALE : MALE), take(r.chance(0.5) ? FEMALE : MALE)];

  const ctx: PlanCtx = {
    r,
    p,
    n,
    load,
    sessions,
    coworkers,
    friends,
    date: (s) => at(sessions, s - 1).date,
    one(lo = 0, hi = 1) {
      const cands = inRange(lo, hi);
      const min = Math.min(...cands.map((s) => at(load, s)));
      const s = r.pick(cands.filter((x) => at(load, x) <= min + 2));
      load[s] = at(load, s) + 2;
      return s;
    },
    seq(k, lo, hi, minGap) {
      const cands = inRange(lo, hi);
      const gapOk = (xs: number[]) => xs.every((s, i) => i === 0 || daysBetween(ctx.date(at(xs, i - 1)), ctx.date(s)) >= minGap);
      const min = Math.min(...cands.map((s) => at(load, s)));
      const light = cands.filter((s) => at(load, s) <= min + 4);
      for (let attempt = 0; attempt < 80; attempt++) {
        const pool = attempt < 40 && light.length >= k ? light : cands;
        const xs = r.sample(pool, k).sort((a, b) => a - b);
        if (xs.length === k && gapOk(xs)) {
          for (const s of xs) load[s] = at(load, s) + 2;
          return xs;
        }
      }
      return null;
    },
    away: (d) => blocked.has(dayKey(d)),
    block(from, to) {
      for (let d = from; d.getTime() <= to.getTime(); d = addDays(d, 1)) blocked.add(dayKey(d));
    },
    claim(d) {
      const k = dayKey(d);
      if (blocked.has(k) || claimed.has(k)) return false;
      claimed.add(k);
      return true;
    },
    reserve(s) {
      load[s] = at(load, s) + 2;
    },
    sessionOnOrAfter: (d) => sessions.find((x) => x.date.getTime() >= d.getTime())?.n ?? -1,
    sessionBefore(d) {
      let out = -1;
      for (const x of sessions) if (x.date.getTime() < d.getTime()) out = x.n;
      return out;
    },
    tag: (label) => `${label}#${++tagCount}`,
    name: (g) => take(g === 'f' ? FEMALE : g === 'm' ? MALE : r.chance(0.5) ? FEMALE : MALE),
    take,
    t: (tpl) => render(tpl, r),
    lead(text) {
      const x = r.next();
      if (x < 0.1 && STARTERS.test(text)) return r.pick(FLOW) + text.charAt(0).toLowerCase() + text.slice(1);
      if (x < 0.2) return r.pick(LEADS) + text;
      if (x < 0.28 && /[.!]$/.test(text)) return text + r.pick(TRAILS);
      return text;
    },
    coworker: () => r.pick(coworkers),
    friend: () => r.pick(friends),
  };
  return ctx;
}
