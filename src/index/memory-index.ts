/**
 * MemoryIndex: what the daemon, the tools, the CLI and the memory page rely on from the
 * long-term memory index — episodes, facts, reflections and entities of each chat's scope,
 * searched by meaning and by words. Callers see only this interface; today's implementation
 * is SqliteMemoryIndex (memory.db: the tables in store/, ranking in search/). Its promises are
 * written down as the contract tests (test/index/memory-index.contract.ts), which any other
 * implementation has to pass as well.
 *
 * Every read and write is inside one scope (a chat, or 'global'): nothing of one scope is
 * found from another. An index that cannot be used is not an error for the chat: `enabled`
 * is false, the plain calls fall back (nothing found, null ids) and the surfaces below are null.
 */
import type { DecayOutcome } from './store/jobs.js';
import type { VectorLayout } from './store/vectors.js';
import type { FactListing, ScopeRow } from './store/browse.js';
import type { IndexMatch } from './store/erase.js';
import type { Correction, FactView, IndexStats } from './store/facts.js';
import type { EpisodeInput, FactInput, MemoryKind, SavedFact } from './store/repository.js';
import type { SearchOptions, SearchResult } from './search/result.js';
import type { EntityInfo } from './search/lookups.js';

export type { Correction, DecayOutcome, EntityInfo, EpisodeInput, FactInput, FactListing, FactView, IndexMatch, IndexStats, MemoryKind, SavedFact, ScopeRow };
export type { SearchOptions, SearchResult, VectorLayout };

/** The nightly upkeep's reads and writes (upkeep/upkeep.ts); they throw on failure. */
export interface IndexJobs {
  /** Records that a job started; returns the run's id for `finishRun`. */
  startRun(job: string, atSec: number): number | bigint;
  finishRun(run: number | bigint, atSec: number, outcome: string, detail: string): void;
  /** Conversations not consolidated yet and not the newest of their scope (the user has left them). */
  pendingConsolidations(): Array<{ session_id: string; scope: string }>;
  /** The live episodes of a conversation, in order. */
  sessionEpisodes(sessionId: string): Array<{ id: string; content: string; source_role: string }>;
  setConsolidated(sessionId: string, atSec: number): void;
  /** Decay of every live fact at `nowSec`; below `threshold` a fact is retired. */
  decay(nowSec: number, threshold: number): DecayOutcome;
  /** Scopes with a live fact created since `sinceSec`. */
  scopesWithFactsSince(sinceSec: number): string[];
  /** When the scope's newest reflection was written (seconds), or null. */
  lastReflectionAt(scope: string): number | null;
  /** The scope's live facts created since `sinceSec`, newest first (at most 200). */
  factsSince(scope: string, sinceSec: number): Array<{ id: string; content: string }>;
}

/** Embeddings of memories and the cache of computed ones (upkeep/embeddings.ts); they throw on failure. */
export interface IndexVectors {
  /** Makes the vector store at this size if it is not there. */
  create(dims: number): void;
  layout(): VectorLayout;
  drop(): void;
  /** Which of these memories still exist (one forgotten while its embedding was computed does not). */
  existing(ids: string[]): Set<string>;
  /** Cached vectors of these content hashes for this model and size. */
  cached(hashes: string[], model: string, dims: number): Map<string, Buffer>;
  cache(entries: Array<{ hash: string; vector: Buffer }>, model: string, dims: number): void;
  /** Stores (or replaces) the vectors of these memories, all or none. */
  store(items: Array<{ id: string; vector: Buffer }>): void;
}

/** One scope's rows as plain listings, no ranking (memory page, /export, /memory facts); they throw on failure. */
export interface IndexBrowse {
  /** The scope's facts, live ones first, newest first. */
  facts(scope: string, max: number): FactListing[];
  /** Entities linked from the scope's live memories, most linked first, each with its three newest memories. */
  entities(scope: string, max: number): Array<{ name: string; type: string; links: number; memories: string[] }>;
  /** Memories of the scope per UTC day and kind. */
  dailyCounts(scope: string): Array<{ day: string; kind: string; n: number }>;
  /** Every memory of the scope, retired ones included, in event order. */
  everything(scope: string): ScopeRow[];
}

/** Taking memories out for good (/forget, purge); they throw on failure. */
export interface IndexEraser {
  /** Memories of `scope` whose text `matches`. */
  matching(scope: string, matches: (text: string) => boolean): IndexMatch[];
  /** These memories, then the scope's entities whose names match (and no other scope links to); how many were deleted. */
  memoriesAndEntities(rows: Array<{ id: string; content: string }>, scope: string, matches: (text: string) => boolean): number;
  /** Everything of one scope. */
  scope(scope: string): { memories: number };
  /** Every scope that has anything stored. */
  scopes(): string[];
  /** Leaves no byte of what was deleted in the store's files (blocking; see MemoryIndex.scrubFreedSpace). */
  scrub(): void;
}

export interface MemoryIndex {
  /** Why the index is off, or null while it works. */
  readonly disabledReason: string | null;
  readonly enabled: boolean;
  /** Whether vectors can be stored here at all (for SQLite: sqlite-vec loaded). */
  readonly vecLoaded: boolean;
  /** Whether search uses vectors; the Embedder turns it on once the vector store matches its model. */
  vectorsOn: boolean;

  // The unguarded surfaces, for callers that report failures themselves (the nightly jobs, the
  // embedder, /forget, purge, the memory page, /export, the memory CLI): their methods throw
  // where the guarded calls below fall back. Null while the index is off.
  readonly jobs: IndexJobs | null;
  readonly vectors: IndexVectors | null;
  readonly browse: IndexBrowse | null;
  readonly erase: IndexEraser | null;

  /** After /forget: no deleted byte left in the store (writes are held meanwhile). Rejects when that failed. */
  scrubFreedSpace(): Promise<void>;
  /** Resolves when no scrub holds writes (callers that write through the unguarded surfaces wait on it). */
  whenWritable(): Promise<void>;
  /**
   * Resolves once what this process wrote is where the index keeps it for good: at once for the
   * SQLite file (written in the call); in PostgreSQL mode once the cache's changes are written to
   * the database. Rejects when they could not be written yet (they stay queued). Whoever tells a
   * user "saved" awaits it first.
   */
  persisted(): Promise<void>;
  /** Rebuilds full text and entities from the memories' text (`memory reindex`); throws when off. */
  rebuildDerived(): { memories: Array<{ id: string; content: string }>; links: number };

  /** Saves one message. Null when it could not be written now; `saved` gets its id if it is written later. */
  saveEpisode(e: EpisodeInput, saved?: (id: string) => void): string | null;
  /** Whether a message's episode is in the index (by scope, source message id and role); undefined when that cannot be told now. */
  hasEpisode(scope: string, sourceMessageId: string, role: string): boolean | undefined;
  /** Saves facts, each once: a duplicate of a live fact names it in `duplicateOf`. */
  saveFacts(facts: FactInput[]): SavedFact[];
  saveReflection(content: string, scope: string, sourceIds: string[]): string | null;
  /** Records that a conversation was consolidated (so the nightly job does not do it again). */
  markConsolidated(sessionId: string, scope: string): void;
  /** Live memories of `opts.scope` for the query, best first (a search counts as access to the facts it returns). */
  search(query: string, opts: SearchOptions): SearchResult[];
  /** About how many memories the store holds, all scopes (the relevance bar scales with it). */
  memoryCount(): number;
  /** The plain-BM25 baseline (for the retrieval eval). */
  searchBm25(query: string, opts: SearchOptions): SearchResult[];
  /** A fact of this scope, or undefined (ids from another scope are "not found"). */
  getFact(id: string, scope: string): FactView | undefined;
  /** correct_fact: retires the old fact and saves the replacement (its id; null when the old one is not a live fact of the scope). */
  correctFact(id: string, scope: string, content: string, sessionId?: string): string | null;
  /**
   * The scope's facts that a correction replaced (not those retired by decay), oldest first, each
   * with the live fact holding its value now: what marks an old value as no longer current in
   * the prompt's memory sections and in search. Empty when the index is off.
   */
  corrections(scope: string): Correction[];
  /** confirm_fact: protected from decay for good; false when not a live fact of the scope. */
  confirmFact(id: string, scope: string): boolean;
  stats(scope: string): IndexStats;
  /** get_entity_info: the entity's profile and the memories of this scope that mention it. */
  entityInfo(name: string, scope: string, limit?: number): EntityInfo | null;
  /** The newest live reflection of a scope. */
  latestReflection(scope: string): SearchResult | undefined;
  meta(key: string): string | undefined;
  setMeta(key: string, value: string): void;
  newId(prefix: string): string;
  close(): void;
}
