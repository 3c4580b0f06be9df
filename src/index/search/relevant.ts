/**
 * What `# Relevant Memory` injects for an incoming message: the top hits of the hybrid search
 * (the same function as search_memory and the eval) that share enough rare words with the
 * message. The bar is on the hit's own BM25, which is about the IDF mass of the words it
 * shares with the message: small talk ("hi, how are you?") shares only words said all the
 * time and injects nothing; a question about something told once passes. The value was
 * calibrated on the tune halves of the dev sets (docs/BENCHMARKS.md: precision of the injected
 * lines before and after).
 */
import type { SearchOptions, SearchResult } from './result.js';
import { contentWords } from '../store/query.js';

export const RELEVANT_LIMIT = 5;
/**
 * Minimum BM25 of a hit's own words for the message, in units of the IDF of a word said once
 * in the whole file (so the bar means the same in a new chat and at a million memories): the
 * bar with the best mean F1 of evidence among injected lines on the tune halves
 * (docs/BENCHMARKS.md).
 */
export const RELEVANT_MIN_MATCH = 1.2;
/** Below this many memories IDF says little (a word in two of four messages scores 0): no bar, only the small-talk check. */
export const RELEVANT_MIN_MEMORIES = 100;

/** FTS5's IDF of a word found in one of `n` documents. */
export function rareWordIdf(n: number): number {
  return Math.log(Math.max(n - 0.5, 1.5) / 1.5);
}

/**
 * Words of greeting, thanks, agreement and the time of day: a message made only of these is
 * small talk, whatever a chat's history says (general English, not taken from any data).
 */
const PHATIC = new Set(
  `hi hey hello hiya heya yo sup howdy greetings morning evening afternoon night day today tonight good great fine nice cool
  awesome well thanks thank thx ty welcome please sorry ok okay alright right yes yeah yep yup no nope nah sure maybe
  lol haha hahaha hehe lmao omg wow oh ah hmm bye goodbye cya see later soon tomorrow talk chat sounds sound guess think
  doing going fun glad happy love got get up new much too`.split(/\s+/),
);

/** True when the message has no word beyond greetings, thanks and function words. */
export function isSmallTalk(message: string): boolean {
  return contentWords(message).every((w) => PHATIC.has(w));
}
/**
 * With embeddings on, a hit this similar (cosine) passes whatever its words. 0.92 is the bar as
 * it worked until the vector table measured cosine (0.6 on 1 − L2 distance, i.e. cosine 0.92 for
 * unit vectors); not calibrated on a real embeddings model, which is not reachable here.
 */
export const RELEVANT_MIN_SIMILARITY = 0.92;

export function passesBar(r: SearchResult, bar: number): boolean {
  return (r.match ?? 0) >= bar || (r.similarity ?? 0) >= RELEVANT_MIN_SIMILARITY;
}

/** What relevantHits needs of the index (the facade, MemoryIndex, sits above search). */
export interface Searchable {
  search(query: string, opts: SearchOptions): SearchResult[];
  memoryCount(): number;
}

/** The hits `# Relevant Memory` shows for a message, best first (at most RELEVANT_LIMIT). */
export function relevantHits(index: Searchable, message: string, opts: Omit<SearchOptions, 'limit'>, minMatch = RELEVANT_MIN_MATCH): SearchResult[] {
  if (minMatch > 0 && isSmallTalk(message)) return [];
  const results = index.search(message, { ...opts, limit: RELEVANT_LIMIT });
  const n = minMatch > 0 ? index.memoryCount() : 0;
  if (n < RELEVANT_MIN_MEMORIES) return results;
  const bar = minMatch * rareWordIdf(n);
  return results.filter((r) => passesBar(r, bar));
}
