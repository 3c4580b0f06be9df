/**
 * The memory's rows as MemoryItems (memory/portable.ts), for PgMemoryService's Portable: the
 * same items, in the same order, as the file twin dumps (file-portable.ts), so files →
 * PostgreSQL → files gives the same bytes. A dump reads one scope at a time (a big memory is
 * never held whole); a load writes in transactions of a few hundred items or megabytes.
 */
import type { Database, Sql } from '../../storage/pg/database.js';
import { AppError } from '../../core/errors.js';
import { byCodeUnits, versionEntry, type MemoryItem } from '../portable.js';
import { storedName } from './files.js';
import { VERSION_COLUMNS, refusalsOf, type VersionRow } from './versions.js';
import { utf8 } from './texts.js';

/** The tables that keep the memory, each with a `scope` column. */
export const MEMORY_TABLES = ['memory_files', 'memory_appends', 'memory_versions', 'memory_version_log'] as const;

/** Every scope with a row in one of the tables, in no order. */
export async function memoryScopes(db: Database): Promise<string[]> {
  const { rows } = await db.query<{ scope: string }>(MEMORY_TABLES.map((t) => `SELECT scope FROM ${t}`).join(' UNION '));
  return rows.map((r) => r.scope);
}

export async function* dumpMemoryRows(db: Database): AsyncIterable<MemoryItem> {
  for (const scope of (await memoryScopes(db)).sort(byCodeUnits)) {
    // One snapshot per scope: its files, log and versions agree with each other.
    const [files, log, versions] = await db.tx(
      async (sql) =>
        [
          (await sql.query<{ name: string; body: Buffer }>('SELECT name, body FROM memory_texts WHERE scope = $1', [scope])).rows,
          (
            await sql.query<{ next: number; refused_count: number; refused_last: string | null }>(
              'SELECT next, refused_count, refused_last FROM memory_version_log WHERE scope = $1',
              [scope],
            )
          ).rows[0],
          (await sql.query<VersionRow & { body: Buffer | null }>(`SELECT ${VERSION_COLUMNS}, body FROM memory_versions WHERE scope = $1 ORDER BY n`, [scope]))
            .rows,
        ] as const,
      { isolation: 'repeatable read' },
    );
    for (const f of files.sort((a, b) => byCodeUnits(a.name, b.name))) yield { kind: 'file', scope, name: f.name, text: f.body.toString('utf8') };
    if (log) yield { kind: 'versions', scope, next: log.next, refused: refusalsOf(log) };
    for (const v of versions) {
      const text = utf8(v.body);
      yield { kind: 'version', scope, info: versionEntry(v), ...(text !== undefined ? { text } : {}) };
    }
  }
}

const BATCH_ITEMS = 200;
const BATCH_BYTES = 8_000_000;

/** Inserts the items (into tables that hold none of them), a batch per transaction. */
export async function loadMemoryRows(db: Database, items: AsyncIterable<MemoryItem>): Promise<number> {
  let batch: MemoryItem[] = [];
  let size = 0;
  let count = 0;
  const flush = async () => {
    const these = batch;
    batch = [];
    size = 0;
    if (these.length)
      await db.tx(async (sql) => {
        for (const item of these) await insertItem(sql, item);
      });
  };
  for await (const item of items) {
    batch.push(item);
    count++;
    size += 'text' in item && item.text !== undefined ? item.text.length : 0;
    if (batch.length >= BATCH_ITEMS || size >= BATCH_BYTES) await flush();
  }
  await flush();
  return count;
}

async function insertItem(sql: Sql, item: MemoryItem): Promise<void> {
  if (!item.scope) throw new AppError('input.invalid', { what: 'a memory item', problem: 'it names no scope' });
  if (item.kind === 'file') {
    await sql.query('INSERT INTO memory_files (scope, name, body) VALUES ($1, $2, $3)', [item.scope, storedName(item.name), Buffer.from(item.text, 'utf8')]);
  } else if (item.kind === 'versions') {
    await sql.query('INSERT INTO memory_version_log (scope, next, refused_count, refused_last) VALUES ($1, $2, $3, $4)', [
      item.scope,
      item.next,
      item.refused.count,
      item.refused.last ? JSON.stringify(item.refused.last) : null,
    ]);
  } else {
    const v = item.info;
    await sql.query(`INSERT INTO memory_versions (scope, ${VERSION_COLUMNS}, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [
      item.scope,
      v.n,
      v.at,
      v.source,
      v.added,
      v.removed,
      v.bytes,
      v.undoes ?? null,
      item.text === undefined ? null : Buffer.from(item.text, 'utf8'),
    ]);
  }
}

export async function memoryRowsEmpty(db: Database): Promise<boolean> {
  const { rows } = await db.query<{ kept: boolean }>(`SELECT ${MEMORY_TABLES.map((t) => `EXISTS (SELECT 1 FROM ${t})`).join(' OR ')} AS kept`);
  return !rows[0]!.kept;
}

export async function clearMemoryRows(db: Database): Promise<void> {
  await db.tx(async (sql) => {
    for (const t of MEMORY_TABLES) await sql.query(`DELETE FROM ${t}`);
  });
}
