/**
 * The people who speak in a chat, and which of them a question names. "What did Ann say about
 * the trip?" is about Ann's own messages; the word "Ann" itself mostly appears in what others
 * say to her. A question's word names a speaker when it is
 *   - a word of the speaker's display name ("Fahim" for "Fahim Khan");
 *   - that name misspelled: same Soundex code and at most a third of its letters different
 *     ("Faheem", "Nikolas");
 *   - what the others call the speaker: the name the other people greet or thank in their
 *     replies ("Thanks, Kate!" after her message), when the display name is a handle.
 * Words are taken only when capitalized in the question (or when the whole question is lower
 * case), so "user roles" does not name the speaker called "User".
 */
import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/db.js';
import { FUNCTION_WORDS } from '../store/query.js';

/** How long a chat's speaker list is trusted before it is read again (another process may write). */
const TTL_MS = 60_000;

export interface NamedSpeakers {
  /** Display names (as stored) of the speakers the question names. */
  speakers: Set<string>;
  /** The question's words that named them (lowercased). */
  terms: Set<string>;
}

/** A message containing a word; `repliesTo()` finds the speaker of the last earlier turn by someone else. */
export interface WordUse {
  content: string;
  speaker: string | null;
  repliesTo: () => string | null;
}

function nameKeys(name: string): string[] {
  const words =
    name
      .toLowerCase()
      .normalize('NFKC')
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((w) => w.length >= 2 && !FUNCTION_WORDS.has(w));
}

const SOUNDEX: Record<string, string> = {
  b: '1',
  f: '1',
  p: '1',
  v: '1',
  c: '2',
  g: '2',
  j: '2',
  k: '2',
  q: '2',
  s: '2',
  x: '2',
  z: '2',
  d: '3',
  t: '3',
  l: '4',
  m: '5',
  n: '5',
  r: '6',
};

/** American Soundex of a Latin-letter word ("" for anything else). */
export function soundex(word: string): string {
  const w = word.toLowerCase();
  if (!/^[a-z]+$/.test(w)) return '';
  let out = w[0]!.toUpperCase();
  let last = SOUNDEX[w[0]!] ?? '';
  for (const ch of w.slice(1)) {
    const code = SOUNDEX[ch] ?? '';
    if (code && code !== last) out += code;
    // h and w do not separate equal codes; vowels do.
    if (ch !== 'h' && ch !== 'w') last = code;
    if (out.length === 4) break;
  }
  return out.padEnd(4, '0');
}

/** Optimal string alignment distance (Levenshtein with adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** "Faheem" for "Fahim": the same sound and at most a third of the letters changed. */
export function sameName(word: string, key: string): boolean {
  if (word.length < 4 || key.length < 4) return false;
  const code = soundex(word);
  return code !== '' && code === soundex(key) && editDistance(word, key) <= 1 + Math.floor(Math.max(word.length, key.length) / 3);
}

const GREETING = String.raw`(?:hi|hey|hello|heya|hiya|yo|thanks|thank you|thx|dear|bye|goodbye|good (?:morning|night|evening|afternoon|luck)|morning|night|congrats|congratulations|welcome|sorry|oh|wow|yes|yeah|no|ok|okay|sure|haha|lol)`;

/** A test for text that addresses `name` directly: "Hey Kate", "Thanks, Kate!", "…, Kate." */
export function addressing(name: string): (text: string) => boolean {
  const n = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const forms = [new RegExp(`(?:^|[.!?]\\s+)${GREETING}[,!]?\\s+${n}\\b`, 'iu'), new RegExp(`,\\s*${n}\\s*(?:[.!?]|$)`, 'u'), new RegExp(`^${n}\\s*[,!]`, 'u')];
  const lower = name.toLowerCase();
  return (text) => text.toLowerCase().includes(lower) && forms.some((re) => re.test(text));
}

export function addresses(text: string, name: string): boolean {
  return addressing(name)(text);
}

export class SpeakerNames {
  private readonly byScope = new Map<string, { at: number; keys: Map<string, Set<string>>; aliases: Map<string, string | null> }>();
  private readonly list: Statement;
  private readonly add: Statement;

  /** `uses(scope, word)`: messages of the scope that contain the word (bounded). */
  constructor(
    db: Db,
    private readonly uses: (scope: string, word: string) => WordUse[],
  ) {
    this.list = db.prepare('SELECT speaker FROM scope_speakers WHERE scope = ?');
    this.add = db.prepare('INSERT OR IGNORE INTO scope_speakers (scope, speaker) VALUES (?, ?)');
  }

  private entry(scope: string) {
    const hit = this.byScope.get(scope);
    if (hit && Date.now() - hit.at < TTL_MS) return hit;
    const keys = new Map<string, Set<string>>();
    for (const { speaker } of this.list.all(scope) as Array<{ speaker: string }>) this.addTo(keys, speaker);
    const e = { at: Date.now(), keys, aliases: new Map<string, string | null>() };
    this.byScope.set(scope, e);
    return e;
  }

  private addTo(keys: Map<string, Set<string>>, speaker: string): void {
    for (const k of nameKeys(speaker)) {
      const set = keys.get(k) ?? new Set<string>();
      set.add(speaker);
      keys.set(k, set);
    }
  }

  /** Records the speaker of a new message (call inside the writing transaction). */
  noteSpeaker(scope: string, speaker: string | undefined): void {
    if (!speaker) return;
    this.add.run(scope, speaker);
    const hit = this.byScope.get(scope);
    if (hit) this.addTo(hit.keys, speaker);
  }

  /**
   * The speaker the others address by `word` (as written in the question), or null: at least
   * two messages address that name, and two thirds of them reply to the same speaker.
   */
  private alias(scope: string, word: string, aliases: Map<string, string | null>): string | null {
    const cached = aliases.get(word);
    if (cached !== undefined) return cached;
    const counts = new Map<string, number>();
    let n = 0;
    const addressed = addressing(word);
    for (const u of this.uses(scope, word)) {
      if (!addressed(u.content)) continue;
      const to = u.repliesTo();
      if (!to || to === u.speaker) continue;
      n++;
      counts.set(to, (counts.get(to) ?? 0) + 1);
    }
    const [top, c] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [null, 0];
    const found = n >= 2 && c >= (2 * n) / 3 ? top : null;
    aliases.set(word, found);
    return found;
  }

  /** True when no message of the scope contains the word (cached with the aliases). */
  private unused(scope: string, word: string, aliases: Map<string, string | null>): boolean {
    const key = `\u0000unused:${word}`;
    const cached = aliases.get(key);
    if (cached !== undefined) return cached !== null;
    const none = this.uses(scope, word).length === 0;
    aliases.set(key, none ? word : null);
    return none;
  }

  named(scope: string, query: string): NamedSpeakers {
    const out: NamedSpeakers = { speakers: new Set(), terms: new Set() };
    const words = query.normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? [];
    if (words.length === 0) return out;
    const { keys, aliases } = this.entry(scope);
    if (keys.size === 0) return out;
    const lower = query === query.toLowerCase();
    words.forEach((w, i) => {
      if (!lower && !/^\p{Lu}/u.test(w)) return;
      const key = w.toLowerCase();
      if (FUNCTION_WORDS.has(key) || key.length < 2) return;
      let found = keys.get(key);
      if (!found) {
        const near = [...keys].filter(([k]) => sameName(key, k)).flatMap(([, s]) => [...s]);
        if (near.length > 0) found = new Set(near);
      }
      // The first word is capitalized anyway: only a speaker's own name counts there.
      if (!found && !lower && i > 0 && key.length >= 3) {
        const a = this.alias(scope, w, aliases);
        if (a) found = new Set([a]);
      }
      // A typo the sound test misses ("Akim" for "Akib"): one letter off a speaker's name, and
      // a word nobody in the chat ever wrote (so not another person's name).
      if (!found && !lower && i > 0 && key.length >= 4) {
        const near = [...keys].filter(([k]) => k.length >= 4 && editDistance(key, k) <= 1).flatMap(([, s]) => [...s]);
        if (near.length > 0 && this.unused(scope, w, aliases)) found = new Set(near);
      }
      if (!found) return;
      out.terms.add(key);
      for (const s of found) out.speakers.add(s);
    });
    return out;
  }
}
