/**
 * The memory index's items (portable-index.ts) in PostgreSQL: read from the canonical tables
 * (migrations/pg/020_memory_index.sql) page by page, and written through the change feed
 * (writeBatch), as a process writes them — so a cache of this database that follows the feed
 * takes them in, and `pos` follows the order the items come in. `clear` gives the feed a new
 * identity: every cache of the database as it was rebuilds itself at its next open.
 */
import type { Database } from '../../storage/pg/database.js';
import type { Portable } from '../../storage/portable.js';
import { isLocalMeta, LOAD_BATCH, type IndexItem } from '../portable-index.js';
import { MEMORY_COLUMNS } from '../store/rows.js';
import { toMark, toStored, writeBatch, type Batch } from './feed.js';

const PAGE = 5000;

export class PgIndexPortable implements Portable<IndexItem> {
  readonly portableName = 'memory index';

  constructor(private readonly db: Database) {}

  async *dump(): AsyncIterable<IndexItem> {
    const db = this.db;
    const { rows: meta } = await db.query<{ key: string; value: string }>('SELECT key, value FROM memory_meta ORDER BY key');
    for (const r of meta) yield { meta: r.key, value: r.value };
    for (let pos = 0; ; ) {
      const { rows } = await db.query(`SELECT pos, ${MEMORY_COLUMNS.join(', ')} FROM memory_rows WHERE pos > $1 ORDER BY pos LIMIT $2`, [pos, PAGE]);
      if (rows.length === 0) break;
      pos = Number(rows.at(-1)!.pos);
      for (const { pos: _, ...r } of rows) yield { memory: toStored(r) };
    }
    const { rows: marks } = await db.query('SELECT session_id, scope, first_seen_at, consolidated_at FROM memory_sessions ORDER BY session_id');
    for (const r of marks) yield { session: toMark(r) };
    for (let after = ''; ; ) {
      const { rows } = await db.query<{ memory_id: string; vector: Buffer }>(
        'SELECT memory_id, vector FROM memory_vectors WHERE memory_id > $1 ORDER BY memory_id LIMIT $2',
        [after, PAGE],
      );
      if (rows.length === 0) break;
      after = rows.at(-1)!.memory_id;
      for (const r of rows) yield { vector: r.memory_id, embedding: r.vector.toString('base64') };
    }
  }

  /** Writes the items in batches through the feed, each batch one transaction. */
  async load(items: AsyncIterable<IndexItem>): Promise<number> {
    let n = 0;
    let batch: Batch = { memories: [], sessions: [], meta: [], vectors: [] };
    let size = 0;
    const flush = async () => {
      if (size === 0) return;
      await writeBatch(this.db, batch);
      n += size;
      batch = { memories: [], sessions: [], meta: [], vectors: [] };
      size = 0;
    };
    for await (const item of items) {
      if ('meta' in item) {
        if (isLocalMeta(item.meta)) continue;
        batch.meta.push({ key: item.meta, value: item.value });
      } else if ('memory' in item) batch.memories.push({ id: item.memory.id, row: item.memory, inserted: true });
      else if ('session' in item) batch.sessions.push({ id: item.session.session_id, mark: item.session });
      else batch.vectors.push({ id: item.vector, vector: Buffer.from(item.embedding, 'base64') });
      if (++size >= LOAD_BATCH) await flush();
    }
    await flush();
    return n;
  }

  async isEmpty(): Promise<boolean> {
    const { rows } = await this.db.query<{ any: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM memory_rows) OR EXISTS (SELECT 1 FROM memory_sessions) OR EXISTS (SELECT 1 FROM memory_meta) AS any',
    );
    return !rows[0]!.any;
  }

  /** Deletes every row and change; the feed's new identity makes each cache of the old contents rebuild. */
  async clear(): Promise<void> {
    await this.db.tx(async (sql) => {
      await sql.query('SELECT 1 FROM memory_feed FOR UPDATE');
      await sql.query('DELETE FROM memory_vectors');
      await sql.query('DELETE FROM memory_rows');
      await sql.query('DELETE FROM memory_sessions');
      await sql.query('DELETE FROM memory_meta');
      await sql.query('DELETE FROM memory_changes');
      await sql.query('UPDATE memory_feed SET identity = gen_random_uuid()::text, pruned_through = 0');
    });
  }
}
