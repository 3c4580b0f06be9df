/**
 * Old values that a correction replaced, wherever their words still are: a message of the day
 * the user said "Marta lives in Porto", a note line, a line of MEMORY.md. Those texts are never
 * rewritten (the notes only grow, episodes are what was said), so what reads them — search, the
 * prompt's `# Memory` and `# Relevant Memory` — marks them instead, with the current value,
 * and search ranks them below it unless the question asks about before.
 *
 * "States the old value" is a word test, cheap enough for every note line of a turn: the text
 * has a word the correction took away ("Porto"), at least half of the old fact's words, and
 * none of the words the current value added ("Braga"; a text with both is the correction
 * itself, or says where Marta moved from). Words are compared by a crude stem, so "lives",
 * "lived" and "live" meet.
 */
import type { Correction } from '../store/facts.js';
import { contentWords } from '../store/query.js';

function stem(word: string): string {
  const s = word.replace(/(?:ing|ed|es|e|s)$/u, '');
  return s.length >= 3 ? s : word;
}

function stems(text: string): Set<string> {
  return new Set(contentWords(text).map(stem));
}

/** How a text that states an old value is shown: the value that holds now, and the day (ISO) it was corrected. */
export function correctionNote(current: string, when: string): string {
  const text = current.replace(/\s+/g, ' ').trim();
  return `(later corrected, ${when.slice(0, 10)}: ${text.length > 200 ? `${text.slice(0, 200)}…` : text})`;
}

/** When a correction was made, as search results carry it (ISO 8601). */
export function correctedAt(c: Correction): string {
  return new Date(c.until * 1000).toISOString();
}

/**
 * Whether a question asks about an earlier state ("where did I live before?", "what was my old
 * job?"): then search also looks among the facts corrections retired, and does not rank the
 * old value below the new one.
 */
export function asksAboutBefore(query: string): boolean {
  return /\b(?:before|previous(?:ly)?|used to|former(?:ly)?|earlier|in the past|originally|no longer|any ?more|old|did|was|were)\b/i.test(query);
}

export class Superseded {
  private readonly items: Array<{ c: Correction; old: Set<string>; gone: string[]; added: string[] }>;

  constructor(corrections: readonly Correction[]) {
    // Newest correction first: a text is shown with the most recent change of its value.
    this.items = [...corrections].reverse().map((c) => {
      const old = stems(c.old);
      const current = stems(c.current);
      return { c, old, gone: [...old].filter((w) => !current.has(w)), added: [...current].filter((w) => !old.has(w)) };
    });
  }

  get empty(): boolean {
    return this.items.length === 0;
  }

  /** The correction whose old value `text` states, or undefined. */
  stated(text: string): Correction | undefined {
    if (this.items.length === 0) return undefined;
    const words = stems(text);
    for (const it of this.items) {
      if (it.gone.length === 0 || !it.gone.some((w) => words.has(w))) continue;
      if (it.added.some((w) => words.has(w))) continue;
      let shared = 0;
      for (const w of it.old) if (words.has(w)) shared++;
      if (shared * 2 >= it.old.size) return it.c;
    }
    return undefined;
  }

  /** The text, with the correction's note after it when it states an old value. */
  mark(text: string): string {
    const c = this.stated(text);
    return c ? `${text} ${correctionNote(c.current, correctedAt(c))}` : text;
  }
}

/**
 * How far a hit that states an old value drops: to where half its score places it among the
 * others (the same halving a fact's lowest confidence gives in rank.ts). Below the current
 * value when that matched the question about as well, still found when nothing else did.
 */
export const STALE_WEIGHT = 0.5;

/**
 * The list with its stale entries moved down to where STALE_WEIGHT × their score places them
 * among the others, which keep their order (the diversity pass's order included); nothing
 * moves up.
 */
export function rankBelow<T extends { score: number }>(list: readonly T[], stale: (t: T) => boolean): T[] {
  const out: T[] = [];
  const waiting: Array<{ t: T; score: number }> = [];
  for (const t of list) {
    if (stale(t)) {
      waiting.push({ t, score: t.score * STALE_WEIGHT });
      continue;
    }
    while (waiting.length > 0) {
      const i = waiting.findIndex((w) => w.score >= t.score);
      if (i < 0) break;
      out.push(waiting.splice(i, 1)[0]!.t);
    }
    out.push(t);
  }
  out.push(...waiting.map((w) => w.t));
  return out;
}

/**
 * Facts a consolidation extracted, without those that state a corrected value: the messages it
 * reads may be older than the correction ("Marta lives in Porto", said before the owner
 * corrected it to Braga), and saved again such a fact would undo the correction (a new live
 * fact, the current one's confidence lowered as a contradiction). A user who says the old value
 * holds again is heard in that turn (remember_fact, correct_fact), not from a re-read.
 */
export function withoutCorrected(facts: readonly string[], corrections: readonly Correction[]): { kept: string[]; dropped: string[] } {
  const old = new Superseded(corrections);
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const f of facts) (old.stated(f) ? dropped : kept).push(f);
  return { kept, dropped };
}
