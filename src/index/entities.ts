/**
 * Entity extraction without a model (seed 003's "regex" provider, plus capitalized names):
 * @mentions, #hashtags, emails, URLs, dates, and runs of capitalized words that are not
 * sentence-openers. Spans are deduplicated by overlap, the longest span winning.
 */
export type EntityType = 'person' | 'project' | 'organization' | 'location' | 'email' | 'url' | 'date' | 'tag' | 'other';

export interface ExtractedEntity {
  text: string;
  /** Lowercased lookup key; the same for every surface form of one entity. */
  key: string;
  type: EntityType;
  start: number;
  end: number;
}

const MONTHS = 'january|february|march|april|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec';

const PATTERNS: Array<{ type: EntityType; re: RegExp; key?: (m: string) => string }> = [
  { type: 'email', re: /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g },
  { type: 'url', re: /\bhttps?:\/\/[^\s<>()"']+/g },
  { type: 'person', re: /(?<![\w@])@[A-Za-z0-9_]{2,32}\b/g, key: (m) => m.slice(1).toLowerCase() },
  { type: 'tag', re: /(?<![\w#])#[\p{L}\p{N}_]{2,64}/gu, key: (m) => m.slice(1).toLowerCase() },
  { type: 'date', re: /\b\d{4}-\d{2}-\d{2}\b/g },
  { type: 'date', re: new RegExp(`\\b\\d{1,2}(?:st|nd|rd|th)?\\s+(?:${MONTHS})\\.?(?:\\s+\\d{4})?\\b`, 'gi') },
  { type: 'date', re: new RegExp(`\\b(?:${MONTHS})\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?(?:,?\\s+\\d{4})?\\b`, 'gi') },
];

/**
 * Capitalized words that open sentences or are otherwise not names. A general English list,
 * not derived from any data: pronouns, determiners, question words, auxiliaries, greetings,
 * days and months, and common sentence openers.
 */
const NOT_NAMES = new Set(
  `i i'm i've i'll i'd me my mine we our you your he she it they them his her its their this that these those there here
  a an the and or but so if then than because although though while when where who whom whose what which why how
  is are was were be been being am do does did done have has had will would shall should can could may might must
  not no yes yeah yep nope ok okay sure thanks thank please sorry hi hello hey dear good great nice cool wow oh ah well
  just also still even only maybe perhaps really very quite actually anyway besides however meanwhile otherwise
  today tomorrow yesterday tonight now later soon morning evening night afternoon weekend week month year
  monday tuesday wednesday thursday friday saturday sunday january february march april june july august september
  october november december
  let let's lets go going get got make made take took see saw look looks looking think thought know knew want need like love
  after before since until during about above across against along among around at by for from in into of off on onto
  out over through to toward under up upon with within without
  all any both each every few many more most much none other some such same one two three first second last next new old
  happy merry congrats congratulations welcome bye goodbye cheers lol haha btw fyi omg tbh
  sounds sounded hope hoping glad enjoy enjoyed remember remind reminder tell told ask asked try tried
  bot assistant user`.split(/\s+/),
);

const CAP_WORD = /\p{Lu}[\p{L}'’-]*/u;
const TOKEN = /[\p{L}\p{N}'’-]+|[.!?\n]/gu;

function normalizeKey(text: string): string {
  return text
    .toLowerCase()
    .replace(/['’]s$/u, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Runs of capitalized words that are not in NOT_NAMES ("Dana", "New York", "Miso"). */
function capitalizedNames(text: string): ExtractedEntity[] {
  const out: ExtractedEntity[] = [];
  let run: Array<{ w: string; start: number; end: number }> = [];
  const flush = () => {
    if (run.length > 0) {
      const words = run.map((r) => r.w.replace(/['’]s$/u, ''));
      const surface = words.join(' ');
      if (surface.length >= 2) out.push({ text: surface, key: normalizeKey(surface), type: 'other', start: run[0]!.start, end: run.at(-1)!.end });
    }
    run = [];
  };
  for (const m of text.matchAll(TOKEN)) {
    const w = m[0];
    const start = m.index!;
    if (/^[.!?\n]$/.test(w)) {
      flush();
      continue;
    }
    const bare = w.replace(/['’]s$/u, '');
    const isCap = CAP_WORD.test(w[0]!) && w[0] === w[0]!.toUpperCase() && w[0] !== w[0]!.toLowerCase();
    const allCaps = bare.length > 1 && bare === bare.toUpperCase();
    if (isCap && !allCaps && !NOT_NAMES.has(bare.toLowerCase())) {
      run.push({ w, start, end: start + w.length });
      // A possessive ends a name: "Ann's cat".
      if (/['’]s$/u.test(w)) flush();
    } else {
      flush();
    }
  }
  flush();
  return out;
}

export function extractEntities(text: string): ExtractedEntity[] {
  const found: ExtractedEntity[] = [];
  for (const p of PATTERNS) {
    for (const m of text.matchAll(p.re)) {
      const t = m[0].replace(/[.,;:!?]+$/, '');
      found.push({ text: t, key: p.key ? p.key(t) : normalizeKey(t), type: p.type, start: m.index!, end: m.index! + t.length });
    }
  }
  found.push(...capitalizedNames(text));
  // Overlapping spans: keep the longest (an email beats the name inside it).
  found.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start);
  const kept: ExtractedEntity[] = [];
  for (const e of found) {
    if (kept.some((k) => e.start < k.end && k.start < e.end)) continue;
    kept.push(e);
  }
  const seen = new Set<string>();
  return kept
    .sort((a, b) => a.start - b.start)
    .filter((e) => {
      const id = `${e.type}:${e.key}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
}
