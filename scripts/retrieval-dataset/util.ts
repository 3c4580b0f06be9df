// Small deterministic helpers for the retrieval-dataset generator: a seeded PRNG,
// template rendering, date formatting and the person forms used in questions.

/** mulberry32: tiny, fast, good enough for test data, fully deterministic. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(arr: readonly T[]): T {
    if (arr.length === 0) throw new Error('pick from empty array');
    return arr[Math.floor(this.next() * arr.length)] as T;
  }
  shuffle<T>(arr: readonly T[]): T[] {
    const a = arr.slice();
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [a[i], a[j]] = [a[j] as T, a[i] as T];
    }
    return a;
  }
  sample<T>(arr: readonly T[], n: number): T[] {
    return this.shuffle(arr).slice(0, n);
  }
  /** An independent stream derived from this one and a label. */
  fork(label: string): Rng {
    let h = 2166136261;
    for (const ch of label) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
    return new Rng((h ^ Math.floor(this.next() * 4294967296)) >>> 0);
  }
}

export const at = <T>(arr: readonly T[], i: number): T => {
  const v = arr[i];
  if (v === undefined) throw new Error(`index ${i} out of range (${arr.length})`);
  return v;
};

export const cap = (s: string): string => (s.length ? s.charAt(0).toUpperCase() + s.slice(1) : s);

/**
 * Render a template: «a|b|c» picks one alternative (innermost first, so they nest);
 * {slot} / {slot2} draw from pools[slot], consistently within one `vars` map and
 * without repeating a value between {slot} and {slot2}.
 */
export function render(tpl: string, r: Rng, vars: Map<string, string> = new Map(), pools: Record<string, readonly string[]> = {}): string {
  let s = tpl;
  const alt = /«([^«»]*)»/;
  for (let m = alt.exec(s); m; m = alt.exec(s)) {
    const opts = (m[1] ?? '').split('|');
    s = s.slice(0, m.index) + r.pick(opts) + s.slice(m.index + m[0].length);
  }
  return s.replace(/\{([a-z]+)(\d?)\}/g, (_all, base: string, n: string) => {
    const key = base + n;
    const got = vars.get(key);
    if (got !== undefined) return got;
    const pool = pools[base];
    if (!pool) throw new Error(`no pool for {${key}} in: ${tpl}`);
    const used = new Set<string>();
    for (const [k, v] of vars) if (k.replace(/\d$/, '') === base) used.add(v);
    const cands = pool.filter((x) => !used.has(x));
    const v = r.pick(cands.length ? cands : pool);
    vars.set(key, v);
    return v;
  });
}

export const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'] as const;
export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;

export const DAY_MS = 86_400_000;
export const addDays = (d: Date, n: number): Date => new Date(d.getTime() + n * DAY_MS);
export const daysBetween = (a: Date, b: Date): number => Math.round((b.getTime() - a.getTime()) / DAY_MS);
export const monthName = (d: Date): string => at(MONTHS, d.getUTCMonth());
export const weekday = (d: Date): string => at(WEEKDAYS, d.getUTCDay());
export function ordinal(n: number): string {
  const t = n % 100;
  if (t >= 11 && t <= 13) return `${n}th`;
  return `${n}${({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th'}`;
}
/** "14 March 2024" */
export const fmtDate = (d: Date): string => `${d.getUTCDate()} ${monthName(d)} ${d.getUTCFullYear()}`;
/** "14 March" */
export const dayMonth = (d: Date): string => `${d.getUTCDate()} ${monthName(d)}`;
/** "Thursday 14 March" */
export const wdDayMonth = (d: Date): string => `${weekday(d)} ${dayMonth(d)}`;
/** Most recent date (strictly before d, or d itself if allowSame) that falls on weekday wd. */
export function lastWeekday(d: Date, wd: number, allowSame = false): Date {
  let x = allowSame ? d : addDays(d, -1);
  while (x.getUTCDay() !== wd) x = addDays(x, -1);
  return x;
}
/** First date at least minAhead days after d that falls on weekday wd. */
export function nextWeekday(d: Date, wd: number, minAhead = 1): Date {
  let x = addDays(d, minAhead);
  while (x.getUTCDay() !== wd) x = addDays(x, 1);
  return x;
}
export const aOrAn = (noun: string): string => (/^[aeiou]/i.test(noun) ? `an ${noun}` : `a ${noun}`);

export interface Persona {
  id: string;
  name: string;
  gender: 'f' | 'm';
  home: string;
  /** First day of the conversation, YYYY-MM-DD. */
  start: string;
  seed: number;
}

/** The grammatical forms a question template needs, in third person (by name) or second person. */
export interface Who {
  third: boolean;
  /** "Maya" / "I" */
  subj: string;
  /** "Maya's" / "my" */
  poss: string;
  /** "Maya" / "me" */
  obj: string;
  /** "does Maya" / "do I" */
  does: string;
  /** "is Maya" / "am I" */
  is: string;
  /** "has Maya" / "have I" */
  has: string;
  /** "was Maya" / "was I" */
  was: string;
  /** pronoun: "she" / "I" */
  pr: string;
  /** possessive pronoun: "her" / "my" */
  prPoss: string;
}

export function who(p: Persona, third: boolean): Who {
  if (third) {
    const pr = p.gender === 'f' ? 'she' : 'he';
    return {
      third,
      subj: p.name,
      poss: `${p.name}'s`,
      obj: p.name,
      does: `does ${p.name}`,
      is: `is ${p.name}`,
      has: `has ${p.name}`,
      was: `was ${p.name}`,
      pr,
      prPoss: p.gender === 'f' ? 'her' : 'his',
    };
  }
  return { third, subj: 'I', poss: 'my', obj: 'me', does: 'do I', is: 'am I', has: 'have I', was: 'was I', pr: 'I', prPoss: 'my' };
}

export const isoMinute = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
