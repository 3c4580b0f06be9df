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
  // Starts only at the first word character of a run (the lookbehind): tried from every
  // position of a long run without an "@", the local part made the search quadratic.
  { type: 'email', re: /\b(?<!\w[.+-]*)[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g },
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
  met saw told went got had took gave came brought bought called texted visited thanked asked wrote said
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

/** Words that start multiword place names ("New York", "San Diego") even though alone they are not names. */
const NAME_PREFIXES = new Set([
  'new',
  'san',
  'santa',
  'los',
  'las',
  'el',
  'la',
  'le',
  'saint',
  'st',
  'port',
  'fort',
  'mount',
  'lake',
  'north',
  'south',
  'east',
  'west',
  'upper',
  'lower',
  'great',
  'old',
]);

function isCapitalized(w: string): boolean {
  const c = w[0]!;
  return CAP_WORD.test(c) && c === c.toUpperCase() && c !== c.toLowerCase();
}

/**
 * Runs of capitalized words that are not in NOT_NAMES ("Dana", "New York", "Miso"). The first
 * word of a sentence is capitalized anyway, so it only counts when it is possessive ("Ann's"),
 * or starts a multiword place name; adverbs in -ly never count.
 */
function capitalizedNames(text: string): ExtractedEntity[] {
  const out: ExtractedEntity[] = [];
  const tokens = [...text.matchAll(TOKEN)].map((m) => ({ w: m[0], start: m.index! }));
  let run: Array<{ w: string; start: number; end: number }> = [];
  const flush = () => {
    if (run.length > 0) {
      const surface = run.map((r) => r.w.replace(/['’]s$/u, '')).join(' ');
      if (surface.length >= 2) out.push({ text: surface, key: normalizeKey(surface), type: 'other', start: run[0]!.start, end: run.at(-1)!.end });
    }
    run = [];
  };
  let sentenceStart = true;
  tokens.forEach(({ w, start }, i) => {
    if (/^[.!?\n]$/.test(w)) {
      flush();
      sentenceStart = true;
      return;
    }
    const first = sentenceStart;
    sentenceStart = false;
    const bare = w.replace(/['’]s$/u, '');
    const lower = bare.toLowerCase();
    const allCaps = bare.length > 1 && bare === bare.toUpperCase();
    const next = tokens[i + 1]?.w ?? '';
    const startsPlace = NAME_PREFIXES.has(lower) && next !== '' && isCapitalized(next) && !NOT_NAMES.has(next.toLowerCase());

    const nextIsName = next !== '' && isCapitalized(next) && !NOT_NAMES.has(next.toLowerCase());
    let ok = isCapitalized(w) && !allCaps && (!NOT_NAMES.has(lower) || (run.length === 0 && startsPlace)) && !/ly$/.test(lower);
    // Sentence-initial: a name only when possessive or followed by another name word ("Dana Whitaker").
    if (ok && first && run.length === 0 && !/['’]s$/u.test(w) && !nextIsName) ok = false;
    if (ok) {
      run.push({ w, start, end: start + w.length });
      // A possessive ends a name: "Ann's cat".
      if (/['’]s$/u.test(w)) flush();
    } else {
      flush();
    }
  });
  flush();
  return out;
}

/** Without trailing . , ; : ! ? — what /[.,;:!?]+$/ removed, without its quadratic retries. */
function trimTrailingPunctuation(t: string): string {
  let end = t.length;
  while (end > 0 && '.,;:!?'.includes(t[end - 1]!)) end--;
  return t.slice(0, end);
}

/**
 * Entities are looked for in this many first characters: all of any message a user can send
 * (MAX_MESSAGE_CHARS), while a model's 200,000-character answer cost the event loop ~0.5 s.
 */
const SCAN_CHARS = 20_000;

/** The part of `full` scanned: cut at a space near SCAN_CHARS, so no word is cut into a new name. */
function scanned(full: string): string {
  if (full.length <= SCAN_CHARS) return full;
  let end = SCAN_CHARS;
  while (end > SCAN_CHARS - 200 && !/\s/.test(full[end]!)) end--;
  return full.slice(0, end > SCAN_CHARS - 200 ? end : SCAN_CHARS);
}

export function extractEntities(full: string): ExtractedEntity[] {
  const text = scanned(full);
  const found: ExtractedEntity[] = [];
  for (const p of PATTERNS) {
    for (const m of text.matchAll(p.re)) {
      const t = trimTrailingPunctuation(m[0]);
      found.push({ text: t, key: p.key ? p.key(t) : normalizeKey(t), type: p.type, start: m.index!, end: m.index! + t.length });
    }
  }
  found.push(...capitalizedNames(text));
  // Overlapping spans: keep the longest (an email beats the name inside it). Characters
  // already taken are marked: comparing each span with every kept one was quadratic.
  found.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start);
  const kept: ExtractedEntity[] = [];
  const taken = new Uint8Array(text.length);
  for (const e of found) {
    if (taken.subarray(e.start, e.end).includes(1)) continue;
    taken.fill(1, e.start, e.end);
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
