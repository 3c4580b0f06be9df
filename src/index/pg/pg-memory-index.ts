/**
 * PgMemoryIndex: the MemoryIndex (memory-index.ts) with its rows canonical in PostgreSQL and
 * searched in a local SQLite cache — today's SqliteMemoryIndex, the same ranking code, so search
 * keeps its quality and speed (PostgreSQL's own full-text ranking is worse and slower: see
 * docs/postgres.md#the-memory-index, which this file follows).
 *
 * Every call is the cache's, synchronous as the interface wants; the cache's triggers note what
 * changed (cache.ts) and a background sync writes it to PostgreSQL and applies what other
 * processes wrote (feed.ts), one step at a time: at open, after each write, on each NOTIFY and
 * after the listening connection comes back, and on `settle()`. A failed step is logged once and
 * tried again with back-off; the cache keeps working meanwhile.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../../core/log.js';
import { errorMessage } from '../../core/errors.js';
import { backoffDelay } from '../../core/retry.js';
import type { Database } from '../../storage/pg/database.js';
import { SqliteMemoryIndex } from '../sqlite-memory-index.js';
import type {
  Correction,
  EntityInfo,
  EpisodeInput,
  FactInput,
  FactView,
  IndexBrowse,
  IndexEraser,
  IndexJobs,
  IndexStats,
  IndexVectors,
  MemoryIndex,
  SavedFact,
  SearchOptions,
  SearchResult,
} from '../memory-index.js';
import { CacheTables, type OutboxEntry } from './cache.js';
import { FEED_CHANNEL, changesAfter, feedInfo, pruneChanges, snapshot, stateOf, writeBatch, type Batch } from './feed.js';

export interface PgMemoryIndexOptions {
  db: Database;
  log: Logger;
  /** The cache file, kept across starts (unwritten changes survive a crash); without it, a temporary file removed at close. */
  cacheFile?: string;
  /** false: a copy as of the open, that neither follows the feed nor writes (the retrieval eval). */
  follow?: boolean;
}

/** Outbox entries written per transaction, changes read per step. */
const BATCH = 1000;
const FEED_PAGE = 5000;

export class PgMemoryIndex implements MemoryIndex {
  private tables: CacheTables;
  private closed = false;
  private follow = true;
  /** The sync steps, one after another. */
  private chain: Promise<void> = Promise.resolve();
  private queued = false;
  private failures = 0;
  private retry: NodeJS.Timeout | undefined;
  private unlisten: (() => void) | undefined;
  private surfaces: { jobs: IndexJobs | null; vectors: IndexVectors | null; browse: IndexBrowse | null; erase: IndexEraser | null };

  /** Opens the cache, writes what it has unwritten, then rebuilds it or catches it up before resolving; then follows the feed. */
  static async open(opts: PgMemoryIndexOptions): Promise<PgMemoryIndex> {
    const temp = opts.cacheFile === undefined;
    const file = opts.cacheFile ?? path.join(os.tmpdir(), `membot-index-${process.pid}-${randomBytes(6).toString('hex')}.db`);
    const index = new PgMemoryIndex(opts.db, opts.log, file, temp);
    index.follow = opts.follow ?? true;
    try {
      await index.start();
    } catch (err) {
      // Unreachable past the wait: the cache serves what it has, and the sync keeps trying.
      opts.log.warn({ err: errorMessage(err) }, 'the memory index could not be brought up to date with the database; searching the local cache, retrying…');
      index.later();
    }
    return index;
  }

  private constructor(
    private readonly db: Database,
    private readonly log: Logger,
    readonly file: string,
    private readonly temp: boolean,
  ) {
    let cache = new SqliteMemoryIndex(file, log);
    if (!cache.enabled) {
      // A cache that cannot be opened is only a cache: start another.
      cache.close();
      removeFile(file);
      cache = new SqliteMemoryIndex(file, log);
    }
    this.cache = cache;
    this.tables = new CacheTables(cache);
    this.surfaces = this.surfacesOf(cache);
  }

  private cache: SqliteMemoryIndex;

  /** The cache's unguarded surfaces, each call of those that write followed by a sync. */
  private surfacesOf(cache: SqliteMemoryIndex): PgMemoryIndex['surfaces'] {
    const kick = <T extends object>(surface: T | null): T | null => (surface ? afterEach(surface, () => this.sync()) : null);
    return { jobs: kick(cache.jobs), browse: cache.browse, erase: kick(cache.erase), vectors: cache.vectors ? this.vectorSurface(cache.vectors) : null };
  }

  private async start(): Promise<void> {
    const info = await feedInfo(this.db);
    if (this.tables.identity !== info.identity) {
      if (this.tables.identity !== undefined) this.log.warn('the memory cache belonged to another database: rebuilt from this one');
      await this.rebuild();
    } else {
      await this.push();
      const now = await feedInfo(this.db);
      if (this.tables.cursor < now.prunedThrough || this.tables.cursor > now.head) await this.rebuild();
      else await this.pull();
    }
    if (!this.follow) return;
    this.unlisten = await this.db.listen(FEED_CHANNEL, () => this.sync());
    void pruneChanges(this.db).catch((err: unknown) => this.log.debug({ err: errorMessage(err) }, 'old memory changes not pruned'));
  }

  /** Empties the cache and fills it from one snapshot of the database. */
  private async rebuild(): Promise<void> {
    this.cache.close();
    removeFile(this.file);
    this.cache = new SqliteMemoryIndex(this.file, this.log);
    this.tables = new CacheTables(this.cache);
    this.surfaces = this.surfacesOf(this.cache);
    const info = await snapshot(this.db, (state) => this.tables.apply(state, 0));
    this.tables.mark(info.identity, info.head);
  }

  /** Writes the outbox to the database, batch by batch. */
  private async push(): Promise<void> {
    for (;;) {
      if (this.closed) return;
      const entries = this.tables.pending(BATCH);
      if (entries.length === 0) return;
      await writeBatch(this.db, this.batchOf(entries));
      if (this.closed) return;
      this.tables.written(entries);
    }
  }

  private batchOf(entries: OutboxEntry[]): Batch {
    const b: Batch = { memories: [], sessions: [], meta: [], vectors: [] };
    for (const e of entries) {
      if (e.kind === 'memory') b.memories.push({ id: e.key, row: this.tables.memory(e.key) ?? null, inserted: e.inserted });
      else if (e.kind === 'session') b.sessions.push({ id: e.key, mark: this.tables.session(e.key) ?? null });
      else if (e.kind === 'meta') b.meta.push({ key: e.key, value: this.tables.meta(e.key) ?? null });
      else b.vectors.push({ id: e.key, vector: this.tables.vector(e.key) ?? null });
    }
    return b;
  }

  /** Applies the changes other processes (and this one) wrote since the cache's position. */
  private async pull(): Promise<void> {
    let erased = false;
    for (;;) {
      if (this.closed) return;
      const changes = await changesAfter(this.db, this.tables.cursor, FEED_PAGE);
      if (changes.length === 0) break;
      const state = await stateOf(this.db, changes);
      if (this.closed) return;
      erased = this.tables.apply(state, changes.at(-1)!.seq).erased || erased;
    }
    // Another process erased memories: no byte of them stays in this cache either.
    if (erased && !this.closed) await this.cache.scrubFreedSpace();
  }

  /** One step: the outbox out, the feed in. */
  private step(): Promise<void> {
    const run = this.chain.then(async () => {
      this.queued = false;
      if (this.closed) return;
      await this.push();
      await this.pull();
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Schedules a step in the background (several requests before it starts make one). */
  private sync(): void {
    if (this.closed || this.queued || !this.follow) return;
    this.queued = true;
    this.step().then(
      () => (this.failures = 0),
      (err: unknown) => {
        if (this.failures++ === 0) this.log.warn({ err: errorMessage(err) }, 'the memory index could not be synced with the database; retrying…');
        this.later();
      },
    );
  }

  private later(): void {
    if (this.closed) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => this.sync(), backoffDelay(this.failures, 500, 30_000, Math.random));
    this.retry.unref();
  }

  /** Resolves when everything written here is in the database and everything written there until now is here; rejects when that failed. */
  async settle(): Promise<void> {
    await this.step();
  }

  persisted(): Promise<void> {
    return this.settle();
  }

  /** settle(), then close(). */
  async shutdown(): Promise<void> {
    await this.settle().catch((err: unknown) =>
      this.log.warn({ err: errorMessage(err) }, 'memory changes not written to the database at close; kept in the cache file'),
    );
    this.close();
  }

  private vectorSurface(vectors: IndexVectors): IndexVectors {
    return afterEach(
      Object.assign(Object.create(vectors) as IndexVectors, {
        store: (items: Array<{ id: string; vector: Buffer }>) => {
          vectors.store(items);
          this.tables.vectorsChanged(items.map((i) => i.id));
        },
      }),
      () => this.sync(),
    );
  }

  get disabledReason(): string | null {
    return this.cache.disabledReason;
  }
  get enabled(): boolean {
    return this.cache.enabled && !this.closed;
  }
  get vecLoaded(): boolean {
    return this.cache.vecLoaded;
  }
  get vectorsOn(): boolean {
    return this.cache.vectorsOn;
  }
  set vectorsOn(on: boolean) {
    this.cache.vectorsOn = on;
  }
  get jobs(): IndexJobs | null {
    return this.surfaces.jobs;
  }
  get vectors(): IndexVectors | null {
    return this.surfaces.vectors;
  }
  get browse(): IndexBrowse | null {
    return this.surfaces.browse;
  }
  get erase(): IndexEraser | null {
    return this.surfaces.erase;
  }

  /**
   * After /forget: the deletes written to the database, its tables that held the text rewritten
   * (a plain VACUUM frees a dead row's space without overwriting it), a checkpoint asked for so
   * the write-ahead log moves on, then the cache scrubbed.
   */
  async scrubFreedSpace(): Promise<void> {
    await this.settle();
    await this.db.query('VACUUM (FULL) memory_rows');
    await this.db.query('VACUUM (FULL) memory_vectors');
    await this.db.query('CHECKPOINT').catch((err: unknown) => this.log.debug({ err: errorMessage(err) }, 'CHECKPOINT not allowed to this role'));
    await this.cache.scrubFreedSpace();
  }

  whenWritable(): Promise<void> {
    return this.cache.whenWritable();
  }
  /** Derived tables only: nothing of them is in the database. */
  rebuildDerived(): { memories: Array<{ id: string; content: string }>; links: number } {
    return this.cache.rebuildDerived();
  }

  private written<T>(result: T): T {
    this.sync();
    return result;
  }

  saveEpisode(e: EpisodeInput, saved?: (id: string) => void): string | null {
    return this.written(this.cache.saveEpisode(e, saved === undefined ? undefined : (id) => (saved(id), this.sync())));
  }
  hasEpisode(scope: string, sourceMessageId: string, role: string): boolean | undefined {
    return this.cache.hasEpisode(scope, sourceMessageId, role);
  }
  saveFacts(facts: FactInput[]): SavedFact[] {
    return this.written(this.cache.saveFacts(facts));
  }
  saveReflection(content: string, scope: string, sourceIds: string[]): string | null {
    return this.written(this.cache.saveReflection(content, scope, sourceIds));
  }
  markConsolidated(sessionId: string, scope: string): void {
    this.written(this.cache.markConsolidated(sessionId, scope));
  }
  /** A search of facts counts as access to them: that is a write too. */
  search(query: string, opts: SearchOptions): SearchResult[] {
    const results = this.cache.search(query, opts);
    if (results.some((r) => r.kind === 'fact')) this.sync();
    return results;
  }
  memoryCount(): number {
    return this.cache.memoryCount();
  }
  searchBm25(query: string, opts: SearchOptions): SearchResult[] {
    return this.cache.searchBm25(query, opts);
  }
  getFact(id: string, scope: string): FactView | undefined {
    return this.cache.getFact(id, scope);
  }
  correctFact(id: string, scope: string, content: string, sessionId?: string): string | null {
    return this.written(this.cache.correctFact(id, scope, content, sessionId));
  }
  corrections(scope: string): Correction[] {
    return this.cache.corrections(scope);
  }
  confirmFact(id: string, scope: string): boolean {
    return this.written(this.cache.confirmFact(id, scope));
  }
  stats(scope: string): IndexStats {
    return this.cache.stats(scope);
  }
  entityInfo(name: string, scope: string, limit?: number): EntityInfo | null {
    return this.cache.entityInfo(name, scope, limit);
  }
  latestReflection(scope: string): SearchResult | undefined {
    return this.cache.latestReflection(scope);
  }
  meta(key: string): string | undefined {
    return this.cache.meta(key);
  }
  setMeta(key: string, value: string): void {
    this.written(this.cache.setMeta(key, value));
  }
  newId(prefix: string): string {
    return this.cache.newId(prefix);
  }

  /** Closes the cache at once (what is unwritten stays in a kept cache file; `shutdown` writes it first). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retry);
    this.unlisten?.();
    this.cache.close();
    if (this.temp) removeFile(this.file);
  }
}

/** `target` with `after` called after each of its methods (the surfaces whose calls write). */
function afterEach<T extends object>(target: T, after: () => void): T {
  return new Proxy(target, {
    get(t, key) {
      const v = Reflect.get(t, key, t) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        try {
          return (v as (...a: unknown[]) => unknown).apply(t, args);
        } finally {
          after();
        }
      };
    },
  });
}

function removeFile(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
}
