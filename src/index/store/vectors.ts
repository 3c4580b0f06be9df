/**
 * The vector side of `memory.db` (seed 003): the sqlite-vec `vec0` table sized to
 * EMBEDDINGS_DIMENSIONS and the embedding cache keyed by content hash. Only the Embedder and
 * erasing (/forget, purge) write here; the SQL lives with the index so nothing outside
 * src/index/ needs the database handle.
 */
import type Database from 'better-sqlite3';
import { createHash } from 'node:crypto';

type Db = Database.Database;

export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * How vec_memories measures distance. Tables made before 2026-11-23 use vec0's default, L2;
 * newer ones cosine, whose distance is 1 − cosine similarity.
 */
export type VectorMetric = 'cosine' | 'l2';

/**
 * The vector table as it was made: its distance, and whether its KNN can be kept to one chat.
 * Newer tables have the chat's scope as a partition key, so the nearest vectors are looked for
 * among that chat's own; in an older table they were taken from every chat first, and a chat's
 * own could be crowded out of the list before the scope filter.
 */
export interface VectorLayout {
  metric: VectorMetric;
  partitioned: boolean;
}

export function vectorLayout(db: Db): VectorLayout {
  const row = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'vec_memories'").get() as { sql: string } | undefined;
  const sql = row?.sql ?? '';
  return { metric: /distance_metric\s*=\s*cosine/i.test(sql) ? 'cosine' : 'l2', partitioned: /\bscope\s+text\s+partition\s+key\b/i.test(sql) };
}

/**
 * Cosine similarity (0..1, below 0 counted as 0) from a KNN distance. An L2 distance d between
 * unit vectors is √(2 − 2·cos), so cos = 1 − d²/2: exact for embeddings of unit length (OpenAI's
 * are), which keeps an older L2 table usable until `memory reindex --embeddings` rebuilds it.
 * Reading 1 − d as the similarity, as before, gave 0 to every pair below cosine 0.5.
 */
export function similarityOf(distance: number, metric: VectorMetric): number {
  const cos = metric === 'cosine' ? 1 - distance : 1 - (distance * distance) / 2;
  return Math.max(0, Math.min(1, cos));
}

export class VectorTables {
  constructor(private readonly db: Db) {}

  /** Creates the vector table at this size if it is not there (cosine distance, one partition per chat). */
  create(dims: number): void {
    this.db.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS vec_memories USING vec0(memory_id TEXT PRIMARY KEY, scope TEXT PARTITION KEY, embedding float[${dims}] distance_metric=cosine)`,
    );
  }

  layout(): VectorLayout {
    return vectorLayout(this.db);
  }

  drop(): void {
    this.db.exec('DROP TABLE IF EXISTS vec_memories');
  }

  /** Which of these memories still exist (one forgotten while its embedding was computed does not). */
  existing(ids: string[]): Set<string> {
    const has = this.db.prepare('SELECT 1 FROM memories WHERE id = ?');
    return new Set(ids.filter((id) => has.get(id) !== undefined));
  }

  /** Cached vectors of these content hashes for this model and size. */
  cached(hashes: string[], model: string, dims: number): Map<string, Buffer> {
    const get = this.db.prepare('SELECT vector FROM embedding_cache WHERE hash = ? AND model = ? AND dims = ?');
    const out = new Map<string, Buffer>();
    for (const hash of hashes) {
      const row = get.get(hash, model, dims) as { vector: Buffer } | undefined;
      if (row) out.set(hash, row.vector);
    }
    return out;
  }

  cache(entries: Array<{ hash: string; vector: Buffer }>, model: string, dims: number): void {
    const put = this.db.prepare('INSERT OR REPLACE INTO embedding_cache (hash, model, dims, vector) VALUES (?, ?, ?, ?)');
    for (const e of entries) put.run(e.hash, model, dims, e.vector);
  }

  /**
   * Stores (or replaces) the vectors of these memories in one transaction. vec0 tables refuse
   * `INSERT OR REPLACE` on a key they hold ("UNIQUE constraint failed"), so a memory embedded
   * again (a corrected fact that turns out to be a known one) is deleted first.
   */
  store(items: Array<{ id: string; vector: Buffer }>): void {
    const { partitioned } = this.layout();
    const remove = this.db.prepare('DELETE FROM vec_memories WHERE memory_id = ?');
    const insert = this.db.prepare(
      partitioned ? 'INSERT INTO vec_memories (memory_id, scope, embedding) VALUES (?, ?, ?)' : 'INSERT INTO vec_memories (memory_id, embedding) VALUES (?, ?)',
    );
    const scopeOf = this.db.prepare('SELECT scope FROM memories WHERE id = ?').pluck();
    this.db.transaction(() => {
      for (const it of items) {
        remove.run(it.id);
        if (!partitioned) {
          insert.run(it.id, it.vector);
          continue;
        }
        const scope = scopeOf.get(it.id) as string | undefined;
        if (scope !== undefined) insert.run(it.id, scope, it.vector);
      }
    })();
  }
}
