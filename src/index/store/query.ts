/**
 * Turning what a user or the model typed into a safe FTS5 query. Every term is quoted, so
 * FTS5 syntax in the input (`"`, `*`, `NEAR`, `-`, `:`, parentheses) is just text; an input
 * with no usable words gives no query at all (and an empty result, not an error).
 */

/**
 * Common English function words (articles, pronouns, auxiliaries, prepositions, conjunctions,
 * question words): what the baseline of the retrieval eval removes from a question.
 */
export const FUNCTION_WORDS: ReadonlySet<string> = new Set(
  `a about above after again against all am an and any are aren't as at be because been before being below between both but by
  can can't cannot could couldn't did didn't do does doesn't doing don't down during each few for from further had hadn't has
  hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if
  in into is isn't it it's its itself let's me more most mustn't my myself no nor not of off on once only or other ought our
  ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some such than that that's the their
  theirs them themselves then there there's these they they'd they'll they're they've this those through to too under until
  up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom
  why why's with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves`.split(/\s+/),
);

/** Function words plus the words of asking about memory: they say what is asked, not about what. */
const STOP = new Set([
  ...FUNCTION_WORDS,
  ...`tell know remember recall mention mentioned said say says ever anything something please also just really`.split(/\s+/),
]);

/**
 * Words that frame a question about a conversation rather than name its subject ("based on
 * what Ann described, can we assume…", "what kinds of…", "give a summary of…"). Said rarely
 * in chat, they would weigh as much as the subject's own words; left out when the ranking asks.
 */
export const FRAMING_WORDS: ReadonlySet<string> = new Set(
  `based assume assuming given according regarding described describe describes describing discuss discussed discussing
  talk talked talking conversation conversations chat chats words word kind kinds type types sort sorts specific
  provide give list summary summarize comprehensive overview brought bring mentions share shared details detail`.split(/\s+/),
);

export interface AnalyzedQuery {
  /** Lowercased content words, in order, without duplicates. */
  terms: string[];
  /** Every word, stop words included (for n-gram entity lookup). */
  words: string[];
}

export function tokenize(text: string): string[] {
  return (
    text
      .toLowerCase()
      .normalize('NFKC')
      .match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? []
  ).map((w) => w.replace(/['’]s$/u, ''));
}

/** The words of a text that say what it is about (no function words, no asking words). */
export function contentWords(text: string): string[] {
  return tokenize(text).filter((w) => w.length >= 2 && !STOP.has(w));
}

export function analyze(query: string, framing = false): AnalyzedQuery {
  const words = tokenize(query);
  const terms: string[] = [];
  for (const w of words) {
    if (STOP.has(w) || w.length < 2 || (framing && FRAMING_WORDS.has(w))) continue;
    if (!terms.includes(w)) terms.push(w);
  }
  // A query made only of stop words still means something ("who am I?"): fall back to them.
  return { terms: terms.length > 0 ? terms : [...new Set(words.filter((w) => w.length >= 2))], words };
}

export function quoteTerm(t: string): string {
  return `"${t.replace(/"/g, '""')}"`;
}

/** `"a" OR "b" OR "c"`, or null when there is nothing to search for. */
export function ftsOrQuery(terms: string[]): string | null {
  const safe = terms.map((t) => t.replace(/[\u0000-\u001f]/g, '').trim()).filter(Boolean);
  return safe.length > 0 ? safe.map(quoteTerm).join(' OR ') : null;
}

/** Word n-grams (1..3) of the query, lowercased: candidates for entity alias lookup. */
export function ngrams(words: string[], max = 3): string[] {
  const out = new Set<string>();
  for (let n = 1; n <= max; n++) {
    for (let i = 0; i + n <= words.length; i++) out.add(words.slice(i, i + n).join(' '));
  }
  return [...out];
}
