import type { Persona, Rng, Who } from './util.js';

export type Role = 'user' | 'assistant';

/** One message before it gets an id. `tag` marks messages that questions point at. */
export interface Turn {
  role: Role;
  text: string;
  tag?: string;
}

/** A contiguous block of turns placed in one session. */
export interface Part {
  session: number;
  turns: Turn[];
}

export type QTemplate = (w: Who) => string;

/** A question before its evidence tags are resolved to message ids. */
export interface QDraft {
  cat: string;
  /** Tags of the evidence messages. */
  ev: string[];
  answer: string;
  /** Alternative phrasings; one is picked, in third or second person. */
  q: readonly QTemplate[];
  /** Entity questions: the evidence is every message mentioning this key (at most 4). */
  key?: string;
}

/** Something that happened on a known day, for "before/after" and "how long between" questions. */
export interface EventDef {
  tag: string;
  date: Date;
  /** true when the day is stated or implied exactly ("today", "yesterday", "on Monday"). */
  precise: boolean;
  base: QTemplate; // "run her first half marathon"
  past: QTemplate; // "ran her first half marathon"
  pp: QTemplate; // "run her first half marathon" (after "had")
  ger: QTemplate; // "running her first half marathon"
}

/** A named thing that can get follow-up mentions and a "what do we know about X" question. */
export interface EntityDef {
  /** The exact word(s) every mention contains; evidence = the messages containing it. */
  key: string;
  /** Session of the introducing message; follow-ups go in later sessions. */
  after: number;
  about: string;
  q: readonly QTemplate[];
  /** Later mentions: the user's text, what it adds to the answer, and the assistant's reply. */
  follow: readonly { text: string; info: string; reply?: string }[];
  /** Trips and similar are always asked about when present. */
  priority?: boolean;
}

export interface FactOut {
  parts: Part[];
  qs: QDraft[];
  events?: EventDef[];
  entities?: EntityDef[];
}

export interface Ctx {
  r: Rng;
  p: Persona;
  /** Number of sessions. */
  n: number;
  /** Calendar day (00:00 UTC) of session s. */
  date(s: number): Date;
  /** A lightly loaded session whose position lies in [lo, hi] (fractions of the timeline). */
  one(lo?: number, hi?: number): number;
  /** k sessions in increasing order inside [lo, hi], at least minGapDays apart; null if impossible. */
  seq(k: number, lo: number, hi: number, minGapDays: number): number[] | null;
  /** Mark days [from, to] as away from home: no planted messages in sessions on those days. */
  block(from: Date, to: Date): void;
  /** Reserve day d for one dated event; false if it is taken or blocked. */
  claim(d: Date): boolean;
  /** Count one more planted exchange against session s (for sessions not picked by one/seq). */
  reserve(s: number): void;
  /** First session on or after day d, or -1. */
  sessionOnOrAfter(d: Date): number;
  /** Last session strictly before day d, or -1. */
  sessionBefore(d: Date): number;
  /** A unique evidence tag. */
  tag(label: string): string;
  /** A person's first name not used anywhere else in this conversation. */
  name(g: 'f' | 'm' | 'any'): string;
  /** A value from pool not used anywhere else in this conversation. */
  take(pool: readonly string[]): string;
  /** Resolve «a|b» alternatives. */
  t(tpl: string): string;
  /** Maybe wrap a planted user message in a casual lead-in / trailer. */
  lead(text: string): string;
  coworker(): string;
  friend(): string;
}

export interface Kind {
  id: string;
  cat: string;
  /** Kinds sharing a group are mutually exclusive within one conversation (comma-separated list). */
  group?: string;
  plan(c: Ctx): FactOut | null;
}
