/**
 * MemoryIndex: the one object the daemon, the tools and the CLI use for `memory.db`.
 * If the file cannot be opened (locked by another process, corrupt, newer schema) the index
 * is disabled with one clear warning and every call becomes a harmless no-op, so chat goes on.
 */
import type { Logger } from '../core/log.js';
import { openDatabase, type Db } from './db.js';
import { getMeta, setMeta } from './migrations.js';
import { IndexWriter, newId, rebuildDerived, type EpisodeInput, type FactInput, type SavedFact } from './repository.js';
import { HybridSearch, ROW_COLUMNS, toResult, type MemoryRow, type SearchOptions, type SearchResult } from './search.js';
import { AppError, errorMessage } from '../core/errors.js';
import { IndexBrowse } from './browse.js';
import { IndexEraser, scrubFreedSpace } from './erase.js';
import { scrubInWorker } from './scrubber.js';
import { SCOPED_FTS } from './fts.js';
import { JobTables } from './jobs.js';
import { VectorTables } from './vectors.js';
import { CHECKPOINT_PAGES, SAFETY_NET_PAGES, WalCheckpointer } from './checkpointer.js';

const MAX_PENDING = 5_000;

/**
 * SQLite's own failures: the file is locked, damaged, full or unreadable. These are what the
 * guard absorbs (chat goes on without the index); anything else — a TypeError, a constraint or
 * SQL error from our own code — is a bug and is rethrown so a test or the turn's wrap sees it.
 */
const SQLITE_FAILURES = ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_CANTOPEN', 'SQLITE_READONLY', 'SQLITE_PROTOCOL', 'SQLITE_NOMEM', 'SQLITE_PERM', 'SQLITE_INTERRUPT'];

/** The SQLite code of a failure the index rides out, or undefined for anything else. */
export function sqliteFailure(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  // Extended codes (SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_WRITE, …) share their family's prefix.
  return SQLITE_FAILURES.some((f) => code === f || code.startsWith(`${f}_`)) ? code : undefined;
}

export interface IndexStats {
  byKind: Record<string, number>;
  latest: string | null;
  entities: number;
  vectors: boolean;
}

export interface EntityInfo {
  id: string;
  name: string;
  type: string;
  aliases: string[];
  mentions: number;
  memories: SearchResult[];
}

export class MemoryIndex {
  private db: Db | null = null;
  /** Checkpoints the WAL off the event loop (file databases only); null when not running. */
  private checkpointer: WalCheckpointer | null = null;
  private writer: IndexWriter | null = null;
  private searcher: HybridSearch | null = null;
  private tables: { jobs: JobTables; vectors: VectorTables; browse: IndexBrowse; erase: IndexEraser } | null = null;
  readonly disabledReason: string | null;
  vecLoaded = false;
  vectorsOn = false;

  constructor(
    readonly file: string,
    private readonly log: Logger,
  ) {
    let reason: string | null = null;
    try {
      const opened = openDatabase(file);
      this.db = opened.db;
      this.vecLoaded = opened.vec;
      // Probe: a corrupt file can open fine and fail on first read.
      this.db.prepare('SELECT COUNT(*) FROM memories').get();
      this.writer = new IndexWriter(this.db);
      this.searcher = new HybridSearch(this.db, () => this.vectorsOn);
      const db = this.db;
      this.tables = { jobs: new JobTables(db, () => this.vectorsOn), vectors: new VectorTables(db), browse: new IndexBrowse(db), erase: new IndexEraser(db) };
      if (file !== ':memory:') this.startCheckpointer(db, file);
    } catch (err) {
      reason = errorMessage(err);
      this.db?.close();
      this.db = null;
      log.warn({ file, reason }, `memory.db could not be opened; long-term search is off until it can (${reason}). Chat continues.`);
    }
    this.disabledReason = reason;
  }

  /** Leaves SQLite's automatic checkpoint as a safety net only if the worker starts (see checkpointer.ts). */
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

  // The unguarded surfaces below are for callers that report failures themselves (the nightly
  // jobs, the embedder, /forget, purge, the memory page, /export, the memory CLI): their
  // methods throw where the guarded calls further down fall back. Null while the index is off.

  /** The nightly upkeep's queries. */
  get jobs(): JobTables | null {
    return this.db ? this.tables!.jobs : null;
  }

  /** The vector table and embedding cache. */
  get vectors(): VectorTables | null {
    return this.db ? this.tables!.vectors : null;
  }

  /** One chat's rows as listings (memory page, /export). */
  get browse(): IndexBrowse | null {
    return this.db ? this.tables!.browse : null;
  }

  /** Taking memories out for good (/forget, purge). */
  get erase(): IndexEraser | null {
    return this.db ? this.tables!.erase : null;
  }

  /**
   * Leaves no deleted byte in memory.db or its WAL (erase.ts) after /forget. A file's scrub runs
   * in a worker (scrubber.ts) so chats go on meanwhile; this index holds its writes until it
   * ends (new messages wait in memory and are saved then; the embedder and the nightly jobs
   * wait, see whenWritable). Rejects when the scrub failed; the rows are deleted either way.
   */
  async scrubFreedSpace(): Promise<void> {
    if (!this.db) throw new AppError('index.unavailable', { reason: this.disabledReason ?? 'closed' });
    if (this.file === ':memory:') return scrubFreedSpace(this.db);
    // One scrub at a time; checked again after each wait, as two /forget may be waiting.
    while (this.scrubbing) await this.scrubbing.catch(() => undefined);
    if (!this.db) throw new AppError('index.unavailable', { reason: this.disabledReason ?? 'closed' });
    const run = scrubInWorker(this.file, ['memories_fts', SCOPED_FTS]);
    this.scrubbing = run;
    try {
      await run;
    } finally {
      this.scrubbing = null;
      this.replayPending();
    }
  }

  /** Resolves when no scrub holds writes (callers that write through the unguarded surfaces wait on it). */
  async whenWritable(): Promise<void> {
    while (this.scrubbing) await this.scrubbing.catch(() => undefined);
  }

  /** Rebuilds full-text and entities from the memories' text (`memory reindex`); throws when off. */
  rebuildDerived(): { memories: Array<{ id: string; content: string }>; links: number } {
    if (!this.db) throw new AppError('index.unavailable', { reason: this.disabledReason ?? 'closed' });
    return rebuildDerived(this.db);
  }

  /** How long the index rests after finding memory.db locked by another process. */
  pauseMs = 30_000;
  /** Until when it rests (ms since epoch). */
  private pausedUntil = 0;
  /** Episodes not written yet (file locked, or a scrub holding writes), with what their caller does once they are. */
  private readonly pending: Array<{ e: EpisodeInput; saved?: ((id: string) => void) | undefined }> = [];
  /** The scrub running in a worker (scrubFreedSpace): writes are held until it ends. */
  private scrubbing: Promise<void> | null = null;
  /** What failed first in the current outage (null: no outage). */
  private failing: string | null = null;

  /**
   * Runs `fn` on an enabled index. A failure is logged once per outage (not once per message),
   * and the next success of the same kind of call logs the recovery: while another process
   * holds a write lock, reads still work (WAL), and a search that succeeds must not end an
   * outage of writes (the warning would repeat after every pause). A locked file pauses the
   * index for a while instead of making every message wait for the lock. Only SQLite's own
   * failures are absorbed (see `sqliteFailure`); a bug in `fn` surfaces.
   */
  private guard<T>(what: string, fallback: T, fn: (db: Db) => T, write = false): T {
    if (!this.db) return fallback;
    if (Date.now() < this.pausedUntil) return fallback;
    if (write && this.scrubbing) {
      this.log.debug({ what }, `${what} skipped: memory.db is being scrubbed after /forget`);
      return fallback;
    }
    try {
      const out = fn(this.db);
      if (this.failing === what) {
        this.failing = null;
        this.log.info('memory.db works again');
        this.replayPending();
      }
      return out;
    } catch (err) {
      const code = sqliteFailure(err);
      if (code === undefined) throw err;
      const busy = code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
      if (busy) this.pausedUntil = Date.now() + this.pauseMs;
      if (this.failing === null) {
        this.failing = what;
        this.log.warn(
          { what, code, err: errorMessage(err) },
          busy
            ? `memory.db is locked by another process; indexing pauses for ${Math.round(this.pauseMs / 1000)} s at a time until it is free (messages stay in sessions and notes)`
            : `${what} failed; continuing without it until it works again`,
        );
      } else {
        this.log.debug({ what, err: errorMessage(err) }, `${what} failed`);
      }
      return fallback;
    }
  }

  private replayPending(): void {
    const items = this.pending.splice(0);
    if (items.length === 0) return;
    if (!this.db) {
      this.log.warn({ episodes: items.length }, 'memory.db closed before the messages held for it were indexed; they stay in the sessions and notes');
      return;
    }
    for (const { e, saved } of items) {
      const id = this.saveEpisode(e, saved);
      if (id) saved?.(id);
    }
    this.log.info({ episodes: items.length }, 'indexed the messages that arrived while memory.db was locked or being scrubbed');
  }

  /**
   * Saves one message. Null when it could not be written now: if the file is locked or a scrub
   * holds writes it is kept and written later, and `saved` then gets its id (the embedder queues it).
   */
  saveEpisode(e: EpisodeInput, saved?: (id: string) => void): string | null {
    const id = this.guard('saving an episode', null, () => this.writer!.saveEpisode(e, () => this.searcher!.speakers.noteSpeaker(e.scope, e.speaker)), true);
    // Kept for later when the file is locked or being scrubbed, so neither costs memories (bounded).
    if (id === null && this.db && (this.failing || this.scrubbing) && this.pending.length < MAX_PENDING) this.pending.push({ e, saved });
    return id;
  }

  saveFacts(facts: FactInput[]): SavedFact[] {
    return this.guard('saving facts', [], () => this.writer!.saveFacts(facts), true);
  }

  saveReflection(content: string, scope: string, sourceIds: string[]): string | null {
    return this.guard('saving a reflection', null, () => this.writer!.saveReflection(content, scope, sourceIds), true);
  }

  /** Records that a conversation was consolidated (so the nightly job does not do it again). */
  markConsolidated(sessionId: string, scope: string): void {
    this.guard('marking a consolidation', undefined, (db) => {
      const now = Math.floor(Date.now() / 1000);
      db.prepare('INSERT INTO sessions_consolidations (session_id, first_seen_at, consolidated_at, scope) VALUES (?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET consolidated_at = excluded.consolidated_at').run(sessionId, now, now, scope);
    }, true);
  }

  search(query: string, opts: SearchOptions): SearchResult[] {
    return this.guard('search', [], (db) => {
      const results = this.searcher!.search(query, opts);
      const facts = results.filter((r) => r.kind === 'fact');
      // (Not while a scrub holds writes: a fact's access clock can miss one search.)
      if (facts.length > 0 && !this.scrubbing) {
        // Retrieval counts as access: it refreshes the decay clock of facts (seed 003). Only
        // facts decay, so only they are written: a search of episodes stays read-only.
        const now = Math.floor(Date.now() / 1000);
        const st = db.prepare('UPDATE memories SET access_count = access_count + 1, last_accessed = ? WHERE id = ?');
        db.transaction(() => facts.forEach((r) => st.run(now, r.id)))();
      }
      return results;
    });
  }

  /**
   * About how many memories the file holds (the largest rowid: no scan). BM25's IDF counts
   * every memory of the file, so the relevance bar of # Relevant Memory is scaled by it.
   */
  memoryCount(): number {
    return this.guard('search', 0, (db) => (db.prepare('SELECT MAX(rowid) AS n FROM memories').get() as { n: number | null }).n ?? 0);
  }

  /** The plain-BM25 baseline (for the retrieval eval). */
  searchBm25(query: string, opts: SearchOptions): SearchResult[] {
    return this.guard('search', [], () =>
      this.searcher!.bm25Only(query, opts).map((row, i) => toResult(row, 1 / (i + 1))),
    );
  }

  /** A fact of this scope, or undefined (ids from another scope are "not found"). */
  getFact(id: string, scope: string): { id: string; content: string; confidence: number; valid: boolean } | undefined {
    return this.guard('reading a fact', undefined, (db) => {
      const r = db.prepare("SELECT id, content, confidence, valid_until FROM memories WHERE id = ? AND scope = ? AND kind = 'fact'").get(id, scope) as
        | { id: string; content: string; confidence: number; valid_until: number | null }
        | undefined;
      return r ? { id: r.id, content: r.content, confidence: r.confidence, valid: r.valid_until === null } : undefined;
    });
  }

  /** correct_fact: soft-deletes the old fact and saves the replacement, which records `supersedes`. */
  correctFact(id: string, scope: string, content: string, sessionId?: string): string | null {
    return this.guard('correcting a fact', null, (db) => {
      let newIdValue: string | null = null;
      db.transaction(() => {
        const now = Math.floor(Date.now() / 1000);
        const r = db.prepare("UPDATE memories SET valid_until = ? WHERE id = ? AND scope = ? AND kind = 'fact' AND valid_until IS NULL").run(now, id, scope);
        if (r.changes === 0) return;
        db.prepare('DELETE FROM memory_entities WHERE memory_id = ?').run(id);
        const saved = this.writer!.saveFacts([{ content, scope, sessionId, sourceIds: [id] }]);
        newIdValue = saved[0]?.duplicateOf ?? saved[0]?.id ?? null;
        if (newIdValue) {
          db.prepare("UPDATE memories SET attributes = json_set(attributes, '$.supersedes', json(?)) WHERE id = ?").run(JSON.stringify([id]), newIdValue);
        }
      })();
      return newIdValue;
    }, true);
  }

  /** confirm_fact: protected from decay for good. */
  confirmFact(id: string, scope: string): boolean {
    return this.guard('confirming a fact', false, (db) => {
      const r = db
        .prepare("UPDATE memories SET decay_rate = 0.0, confidence = 1.0, attributes = json_remove(attributes, '$.base_confidence') WHERE id = ? AND scope = ? AND kind = 'fact' AND valid_until IS NULL")
        .run(id, scope);
      return r.changes > 0;
    }, true);
  }

  stats(scope: string): IndexStats {
    return this.guard('stats', { byKind: {}, latest: null, entities: 0, vectors: false }, (db) => {
      const rows = db.prepare('SELECT kind, COUNT(*) AS n, MAX(event_time) AS t FROM memories WHERE scope = ? AND valid_until IS NULL GROUP BY kind').all(scope) as Array<{
        kind: string;
        n: number;
        t: number;
      }>;
      const latest = rows.reduce((m, r) => Math.max(m, r.t), 0);
      const entities = (
        db.prepare('SELECT COUNT(DISTINCT me.entity_id) AS n FROM memory_entities me JOIN memories m ON m.id = me.memory_id WHERE m.scope = ?').get(scope) as { n: number }
      ).n;
      return { byKind: Object.fromEntries(rows.map((r) => [r.kind, r.n])), latest: latest ? new Date(latest * 1000).toISOString() : null, entities, vectors: this.vectorsOn };
    });
  }

  /** get_entity_info: the entity's profile and the memories of this scope that mention it. */
  entityInfo(name: string, scope: string, limit = 10): EntityInfo | null {
    return this.guard('entity info', null, (db) => {
      const key = name.toLowerCase().replace(/^[@#]/, '').trim();
      const e = db
        .prepare(
          `SELECT e.id, e.canonical_name, e.type, e.aliases, e.mention_count FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
           WHERE a.scope = ? AND a.alias = ? AND EXISTS (SELECT 1 FROM memory_entities me JOIN memories m ON m.id = me.memory_id WHERE me.entity_id = e.id AND m.scope = ?)
           ORDER BY e.mention_count DESC LIMIT 1`,
        )
        .get(scope, key, scope) as { id: string; canonical_name: string; type: string; aliases: string; mention_count: number } | undefined;
      if (!e) return null;
      const rows = db
        .prepare(
          `SELECT ${ROW_COLUMNS} FROM memory_entities me JOIN memories m ON m.id = me.memory_id
           WHERE me.entity_id = ? AND m.scope = ? AND m.valid_until IS NULL ORDER BY m.event_time DESC LIMIT ?`,
        )
        .all(e.id, scope, limit) as MemoryRow[];
      return {
        id: e.id,
        name: e.canonical_name,
        type: e.type,
        aliases: JSON.parse(e.aliases) as string[],
        mentions: e.mention_count,
        memories: rows.map((r) => toResult(r, 0)),
      };
    });
  }

  /** The newest reflection of a scope (cached until a new one is saved). */
  latestReflection(scope: string): SearchResult | undefined {
    return this.guard('reading the reflection', undefined, (db) => {
      const row = db
        .prepare(`SELECT ${ROW_COLUMNS} FROM memories m WHERE m.kind = 'reflection' AND m.scope = ? AND m.valid_until IS NULL ORDER BY m.created_at DESC LIMIT 1`)
        .get(scope) as MemoryRow | undefined;
      return row ? toResult(row, 0) : undefined;
    });
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
