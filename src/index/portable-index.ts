/**
 * What of the memory index moves between the modes (storage/portable.ts,
 * `npm run memory -- migrate`), and memory.db's side of it. The same things PostgreSQL keeps
 * canonical (docs/postgres.md#the-memory-index): the index's shared metadata (the embedding
 * model and size) first, so that vectors find their table; then every memory row with all its
 * columns, in the order first stored, so that a loaded index links entities with the same first
 * spelling and breaks ranking ties the same way; the conversations' consolidation marks; each
 * memory's vector. Not moved, because a load rebuilds them from the text the same way: the
 * full-text tables, entities and their links, each chat's speakers. Not moved either, being a
 * file's own: its schema version, the nightly jobs' run log, the embedding cache.
 */
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../core/log.js';
import { AppError } from '../core/errors.js';
import type { Portable } from '../storage/portable.js';
import { WORKSPACE_FILES } from '../storage/workspace-files.js';
import { SqliteMemoryIndex } from './sqlite-memory-index.js';
import { MEMORY_COLUMNS, type SessionMark } from './store/rows.js';
import type { StoredMemory } from './store/repository.js';
import { getMeta, setMeta } from './store/migrations.js';

/** One thing the index keeps, as it is kept (a vector: float32 little-endian, in base64). */
export type IndexItem = { meta: string; value: string } | { memory: StoredMemory } | { session: SessionMark } | { vector: string; embedding: string };

/** Items written per transaction when loading. */
export const LOAD_BATCH = 1000;

/** The index's metadata that is a file's own, never moved (its schema version, a cache's feed position). */
export const isLocalMeta = (key: string): boolean => key === 'schema_version' || key.startsWith('pg_');

/** memory.db's side: read from the file as it lies (the daemon stopped), written through SqliteMemoryIndex. */
export class SqliteIndexPortable implements Portable<IndexItem> {
  readonly portableName = 'memory index';
  private index: SqliteMemoryIndex | undefined;

  constructor(
    readonly file: string,
    private readonly log: Logger,
  ) {}

  static inWorkspace(workspaceDir: string, log: Logger): SqliteIndexPortable {
    return new SqliteIndexPortable(path.join(workspaceDir, WORKSPACE_FILES.memoryIndex), log);
  }

  /** The open index; undefined when there is no file and `create` is not asked (reading makes none). */
  private open(create = false): SqliteMemoryIndex | undefined {
    if (!this.index && (create || existsSync(this.file))) {
      const index = new SqliteMemoryIndex(this.file, this.log);
      if (!index.enabled) throw new AppError('index.unavailable', { reason: index.disabledReason ?? 'closed' });
      // A damaged file was set aside and an empty one begun: moving that would move nothing, silently.
      if (index.setAside) {
        index.close();
        throw new AppError('index.unavailable', { reason: `memory.db was damaged and set aside as ${path.basename(index.setAside)}` });
      }
      this.index = index;
    }
    return this.index;
  }

  async *dump(): AsyncIterable<IndexItem> {
    const db = this.open()?.database;
    if (!db) return;
    for (const r of db.prepare('SELECT key, value FROM memory_metadata ORDER BY key').iterate() as Iterable<{ key: string; value: string }>) {
      if (!isLocalMeta(r.key)) yield { meta: r.key, value: r.value };
    }
    for (const memory of db.prepare(`SELECT ${MEMORY_COLUMNS.join(', ')} FROM memories ORDER BY rowid`).iterate() as Iterable<StoredMemory>) yield { memory };
    for (const session of db
      .prepare('SELECT session_id, scope, first_seen_at, consolidated_at FROM sessions_consolidations ORDER BY session_id')
      .iterate() as Iterable<SessionMark>) {
      yield { session };
    }
    if (!db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'vec_memories'").get()) return;
    // One at a time, in no order (a load takes them in any): 100k vectors of 1536 floats are 600 MB.
    for (const v of db.prepare('SELECT memory_id, embedding FROM vec_memories').iterate() as Iterable<{ memory_id: string; embedding: Buffer }>) {
      yield { vector: v.memory_id, embedding: Buffer.from(v.embedding).toString('base64') };
    }
  }

  /**
   * Writes the items in batches, each in one transaction. A vector is kept only where sqlite-vec
   * is loaded (the table is made at the size the metadata names): the count says how many were kept.
   */
  async load(items: AsyncIterable<IndexItem>): Promise<number> {
    const index = this.open(true)!;
    const db = index.database!;
    let n = 0;
    let memories: StoredMemory[] = [];
    let vectors: Array<{ id: string; vector: Buffer }> = [];
    const flush = () => {
      if (memories.length > 0) index.restore(memories);
      n += memories.length;
      memories = [];
      if (vectors.length > 0 && this.vectorTable(index)) {
        index.vectors!.store(vectors);
        n += vectors.length;
      }
      vectors = [];
    };
    const mark = db.prepare(
      `INSERT INTO sessions_consolidations (session_id, scope, first_seen_at, consolidated_at) VALUES (@session_id, @scope, @first_seen_at, @consolidated_at)
       ON CONFLICT (session_id) DO UPDATE SET scope = excluded.scope, first_seen_at = excluded.first_seen_at, consolidated_at = excluded.consolidated_at`,
    );
    for await (const item of items) {
      if ('meta' in item) {
        if (isLocalMeta(item.meta)) continue;
        setMeta(db, item.meta, item.value);
        n++;
      } else if ('memory' in item) memories.push(item.memory);
      else if ('session' in item) {
        mark.run(item.session);
        n++;
      } else {
        if (memories.length > 0) flush();
        vectors.push({ id: item.vector, vector: Buffer.from(item.embedding, 'base64') });
      }
      if (memories.length + vectors.length >= LOAD_BATCH) flush();
    }
    flush();
    return n;
  }

  /** Whether vec_memories is there, made now at the stored size when sqlite-vec is loaded. */
  private vectorTable(index: SqliteMemoryIndex): boolean {
    const db = index.database!;
    const has = () => db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'vec_memories'").get() !== undefined;
    const dims = Number(getMeta(db, 'embedding_dimensions') ?? '0');
    if (!has() && index.vecLoaded && dims > 0) index.vectors!.create(dims);
    return has();
  }

  async isEmpty(): Promise<boolean> {
    // Left by `return`, which ends the dump's open statement too.
    for await (const _item of this.dump()) return false;
    return true;
  }

  /** Removes memory.db (and its WAL): nothing of the index is left, nor of its run log and embedding cache. */
  async clear(): Promise<void> {
    this.close();
    for (const f of [this.file, `${this.file}-wal`, `${this.file}-shm`]) rmSync(f, { force: true });
  }

  close(): void {
    this.index?.close();
    this.index = undefined;
  }
}
