/**
 * SqliteMemoryIndex: the MemoryIndex (memory-index.ts) in `memory.db`, the one file the daemon,
 * the tools and the CLI share. A facade with no SQL of its own:
 * the tables are in store/, ranking in search/, the nightly work in upkeep/; what to do while
 * the file cannot be used (locked, damaged, being scrubbed after /forget) is outage.ts.
 * A damaged file is set aside and an empty one started (storage/sqlite.ts). If the file cannot
 * be opened (locked by another process, newer schema, no permission) the index is disabled with
 * one clear warning and every call becomes a harmless no-op, so chat goes on.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { WORKSPACE_FILES } from '../storage/workspace-files.js';
import type { Logger } from '../core/log.js';
import { AppError, errorMessage } from '../core/errors.js';
import { openDatabase, type Db } from './store/db.js';
import { getMeta, setMeta } from './store/migrations.js';
import { IndexWriter, hasEpisode, newId, rebuildDerived } from './store/repository.js';
import { IndexBrowse } from './store/browse.js';
import { IndexEraser, scrubFreedSpace } from './store/erase.js';
import { scrubInWorker } from './store/scrubber.js';
import { SCOPED_FTS } from './store/fts.js';
import { JobTables } from './store/jobs.js';
import { VectorTables } from './store/vectors.js';
import { FactTables } from './store/facts.js';
import { CHECKPOINT_PAGES, SAFETY_NET_PAGES, WalCheckpointer } from './store/checkpointer.js';
import { HybridSearch } from './search/search.js';
import { toResult } from './search/result.js';
import { entityInfo, latestReflection } from './search/lookups.js';
import { OutageGuard } from './outage.js';
import type { StoredMemory } from './store/repository.js';
import type {
  Correction,
  EntityInfo,
  EpisodeInput,
  FactInput,
  FactView,
  IndexStats,
  MemoryIndex,
  SavedFact,
  SearchOptions,
  SearchResult,
} from './memory-index.js';

export { sqliteFailure } from './outage.js';

/** The file's name in the workspace (WORKSPACE_DIR). */
export const MEMORY_DB = WORKSPACE_FILES.memoryIndex;

export class SqliteMemoryIndex implements MemoryIndex {
  private db: Db | null = null;
  /** Checkpoints the WAL off the event loop (file databases only); null when not running. */
  private checkpointer: WalCheckpointer | null = null;
  private parts: {
    writer: IndexWriter;
    searcher: HybridSearch;
    facts: FactTables;
    jobs: JobTables;
    vectors: VectorTables;
    browse: IndexBrowse;
    erase: IndexEraser;
  } | null = null;
  private readonly outage: OutageGuard;
  readonly disabledReason: string | null;
  /** Where a damaged memory.db went when this one started empty (storage/sqlite.ts). */
  readonly setAside: string | undefined;
  vecLoaded = false;
  vectorsOn = false;

  /** The workspace's index (the daemon, the memory CLI). */
  static inWorkspace(workspaceDir: string, log: Logger): SqliteMemoryIndex {
    return new SqliteMemoryIndex(path.join(workspaceDir, MEMORY_DB), log);
  }

  /** The workspace's memory.db when there is one; undefined (nothing made) when there is none (purge). */
  static existing(workspaceDir: string, log: Logger): SqliteMemoryIndex | undefined {
    const file = path.join(workspaceDir, MEMORY_DB);
    return existsSync(file) ? new SqliteMemoryIndex(file, log) : undefined;
  }

  constructor(
    readonly file: string,
    private readonly log: Logger,
  ) {
    this.outage = new OutageGuard(
      log,
      ({ e, saved }) => {
        const id = this.saveEpisode(e, saved);
        if (id) saved?.(id);
      },
      () => this.db !== null,
    );
    let reason: string | null = null;
    try {
      const opened = openDatabase(file, log);
      this.db = opened.db;
      this.vecLoaded = opened.vec;
      this.setAside = opened.setAside;
      const db = this.db;
      const writer = new IndexWriter(db);
      this.parts = {
        writer,
        searcher: new HybridSearch(db, () => this.vectorsOn),
        facts: new FactTables(db, writer),
        jobs: new JobTables(db, () => this.vectorsOn),
        vectors: new VectorTables(db),
        browse: new IndexBrowse(db),
        erase: new IndexEraser(db),
      };
      if (file !== ':memory:') this.startCheckpointer(db, file);
    } catch (err) {
      reason = errorMessage(err);
      this.db?.close();
      this.db = null;
      this.parts = null;
      log.warn({ file, reason }, `memory.db could not be opened; long-term search is off until it can (${reason}). Chat continues.`);
    }
    this.disabledReason = reason;
  }

  /** Leaves SQLite's automatic checkpoint as a safety net only if the worker starts (see store/checkpointer.ts). */
  private startCheckpointer(db: Db, file: string): void {
    try {
      this.checkpointer = new WalCheckpointer(file, this.log, () => {
        if (db.open) db.pragma(`wal_autocheckpoint = ${CHECKPOINT_PAGES}`);
      });
      db.pragma(`wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
    } catch (err) {
      this.log.warn({ reason: errorMessage(err) }, 'memory.db checkpoint worker could not start; SQLite checkpoints by itself.');
    }
  }

  /** Checkpoints run by the worker so far (0 without one). */
  get workerCheckpoints(): number {
    return this.checkpointer?.checkpoints ?? 0;
  }

  get enabled(): boolean {
    return this.db !== null;
  }

  /** The raw handle, for tests that inspect or tamper with the file. Code outside src/index/ uses the methods. */
  get database(): Db | null {
    return this.db;
  }

  /** How long the index rests after finding memory.db locked by another process (outage.ts). */
  get pauseMs(): number {
    return this.outage.pauseMs;
  }

  set pauseMs(ms: number) {
    this.outage.pauseMs = ms;
  }

  // The unguarded surfaces below are for callers that report failures themselves (the nightly
  // jobs, the embedder, /forget, purge, the memory page, /export, the memory CLI): their
  // methods throw where the guarded calls further down fall back. Null while the index is off.

  /** The nightly upkeep's queries. */
  get jobs(): JobTables | null {
    return this.db ? this.parts!.jobs : null;
  }

  /** The vector table and embedding cache. */
  get vectors(): VectorTables | null {
    return this.db ? this.parts!.vectors : null;
  }

  /** One chat's rows as listings (memory page, /export). */
  get browse(): IndexBrowse | null {
    return this.db ? this.parts!.browse : null;
  }

  /** Taking memories out for good (/forget, purge). */
  get erase(): IndexEraser | null {
    return this.db ? this.parts!.erase : null;
  }

  /**
   * Leaves no deleted byte in memory.db or its WAL (store/erase.ts) after /forget. A file's
   * scrub runs in a worker (store/scrubber.ts) so chats go on meanwhile; writes are held until
   * it ends (outage.ts: new messages wait in memory and are saved then; the embedder and the
   * nightly jobs wait, see whenWritable). Rejects when the scrub failed; the rows are deleted
   * either way.
   */
  async scrubFreedSpace(): Promise<void> {
    const off = () => new AppError('index.unavailable', { reason: this.disabledReason ?? 'closed' });
    if (!this.db) throw off();
    if (this.file === ':memory:') return scrubFreedSpace(this.db);
    await this.outage.during(async () => {
      if (!this.db) throw off();
      await scrubInWorker(this.file, ['memories_fts', SCOPED_FTS]);
    });
  }

  /** Resolves when no scrub holds writes (callers that write through the unguarded surfaces wait on it). */
  async persisted(): Promise<void> {
    // Every write is committed in its own call.
  }

  async whenWritable(): Promise<void> {
    await this.outage.whenWritable();
  }

  /** Rebuilds full-text and entities from the memories' text (`memory reindex`); throws when off. */
  rebuildDerived(): { memories: Array<{ id: string; content: string }>; links: number } {
    if (!this.db) throw new AppError('index.unavailable', { reason: this.disabledReason ?? 'closed' });
    return rebuildDerived(this.db);
  }

  /**
   * Writes memories another process stored, as they were stored, in one transaction (the cache
   * of PgMemoryIndex, src/index/pg/); throws when off or on failure.
   */
  restore(rows: StoredMemory[]): void {
    const db = this.db;
    const p = this.parts;
    if (!db || !p) throw new AppError('index.unavailable', { reason: this.disabledReason ?? 'closed' });
    db.transaction(() => {
      for (const r of rows) {
        p.writer.restore(r);
        if (r.kind === 'episode') p.searcher.speakers.noteSpeaker(r.scope, r.speaker ?? undefined);
      }
    })();
  }

  /** Runs `fn` on the open index through the outage guard (off: the fallback). */
  private guard<T>(what: string, fallback: T, fn: (db: Db, parts: NonNullable<SqliteMemoryIndex['parts']>) => T, write = false): T {
    const db = this.db;
    const parts = this.parts;
    if (!db || !parts) return fallback;
    return this.outage.run(what, fallback, () => fn(db, parts), write);
  }

  /**
   * Saves one message. Null when it could not be written now: if the file is locked or a scrub
   * holds writes it is kept and written later, and `saved` then gets its id (the embedder queues it).
   */
  saveEpisode(e: EpisodeInput, saved?: (id: string) => void): string | null {
    const id = this.guard('saving an episode', null, (_db, p) => p.writer.saveEpisode(e, () => p.searcher.speakers.noteSpeaker(e.scope, e.speaker)), true);
    // Kept for later when the file is locked or being scrubbed, so neither costs memories (bounded).
    if (id === null && this.db) this.outage.hold({ e, saved });
    return id;
  }

  /** Whether a message's episode row is in the index (by scope, source message id and role); undefined when that cannot be told now. */
  hasEpisode(scope: string, sourceMessageId: string, role: string): boolean | undefined {
    return this.guard('reading an episode', undefined, (db) => hasEpisode(db, scope, sourceMessageId, role));
  }

  saveFacts(facts: FactInput[]): SavedFact[] {
    return this.guard('saving facts', [], (_db, p) => p.writer.saveFacts(facts), true);
  }

  saveReflection(content: string, scope: string, sourceIds: string[]): string | null {
    return this.guard('saving a reflection', null, (_db, p) => p.writer.saveReflection(content, scope, sourceIds), true);
  }

  /** Records that a conversation was consolidated (so the nightly job does not do it again). */
  markConsolidated(sessionId: string, scope: string): void {
    this.guard('marking a consolidation', undefined, (_db, p) => p.facts.markConsolidated(sessionId, scope), true);
  }

  search(query: string, opts: SearchOptions): SearchResult[] {
    return this.guard('search', [], (_db, p) => {
      const results = p.searcher.search(query, opts, p.facts.corrections(opts.scope));
      const facts = results.filter((r) => r.kind === 'fact');
      // (Not while a scrub holds writes: a fact's access clock can miss one search.)
      // Retrieval counts as access: it refreshes the decay clock of facts (seed 003). Only
      // facts decay, so only they are written: a search of episodes stays read-only.
      if (facts.length > 0 && !this.outage.holding) p.facts.noteAccess(facts.map((r) => r.id));
      return results;
    });
  }

  /** About how many memories the file holds (store/facts.ts), for the relevance bar. */
  memoryCount(): number {
    return this.guard('search', 0, (_db, p) => p.facts.memoryCount());
  }

  /** The plain-BM25 baseline (for the retrieval eval). */
  searchBm25(query: string, opts: SearchOptions): SearchResult[] {
    return this.guard('search', [], (_db, p) => p.searcher.bm25Only(query, opts).map((row, i) => toResult(row, 1 / (i + 1))));
  }

  /** A fact of this scope, or undefined (ids from another scope are "not found"). */
  getFact(id: string, scope: string): FactView | undefined {
    return this.guard('reading a fact', undefined, (_db, p) => p.facts.get(id, scope));
  }

  /** correct_fact: retires the old fact and saves the replacement, which records `supersedes`. */
  correctFact(id: string, scope: string, content: string, sessionId?: string): string | null {
    return this.guard('correcting a fact', null, (_db, p) => p.facts.correct(id, scope, content, sessionId), true);
  }

  /** Facts a correction replaced, with the value that holds now (store/facts.ts). */
  corrections(scope: string): Correction[] {
    return this.guard('reading corrections', [], (_db, p) => p.facts.corrections(scope));
  }

  /** confirm_fact: protected from decay for good. */
  confirmFact(id: string, scope: string): boolean {
    return this.guard('confirming a fact', false, (_db, p) => p.facts.confirm(id, scope), true);
  }

  stats(scope: string): IndexStats {
    return this.guard('stats', { byKind: {}, latest: null, entities: 0, vectors: false }, (_db, p) => p.facts.stats(scope, this.vectorsOn));
  }

  /** get_entity_info: the entity's profile and the memories of this scope that mention it. */
  entityInfo(name: string, scope: string, limit = 10): EntityInfo | null {
    return this.guard('entity info', null, (db) => entityInfo(db, name, scope, limit));
  }

  /** The newest reflection of a scope. */
  latestReflection(scope: string): SearchResult | undefined {
    return this.guard('reading the reflection', undefined, (db) => latestReflection(db, scope));
  }

  meta(key: string): string | undefined {
    return this.guard('metadata', undefined, (db) => getMeta(db, key));
  }

  setMeta(key: string, value: string): void {
    this.guard('writing metadata', undefined, (db) => setMeta(db, key, value), true);
  }

  newId(prefix: string): string {
    return newId(prefix);
  }

  close(): void {
    // The worker's connection first, so the main one closes last and SQLite removes the WAL.
    this.checkpointer?.stop();
    this.checkpointer = null;
    this.db?.close();
    this.db = null;
  }
}
