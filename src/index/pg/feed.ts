/**
 * The PostgreSQL side of PgMemoryIndex (migrations/pg/020_memory_index.sql): writing a batch of
 * the cache's outbox with its change rows, reading the changes after a position and the rows
 * they name, and the snapshot a cache is rebuilt from. docs/postgres.md#the-memory-index.
 */
import type { Database, Sql } from '../../storage/pg/database.js';
import type { StoredMemory } from '../store/repository.js';
import type { ChangeKind, FeedState } from './cache.js';
import { MEMORY_COLUMNS, type SessionMark } from '../store/rows.js';

export const FEED_CHANNEL = 'membot_memory';
/** Changes are kept this long; a cache that has not caught up within it is rebuilt. */
export const KEEP_CHANGES_DAYS = 7;

/** One batch to write: each key with the cache's state of it (null: gone from the cache). */
export interface Batch {
  memories: Array<{ id: string; row: StoredMemory | null; inserted: boolean }>;
  sessions: Array<{ id: string; mark: SessionMark | null }>;
  meta: Array<{ key: string; value: string | null }>;
  vectors: Array<{ id: string; vector: Buffer | null }>;
}

export interface FeedInfo {
  identity: string;
  prunedThrough: number;
  head: number;
}

const TYPES: Record<(typeof MEMORY_COLUMNS)[number], string> = {
  id: 'text',
  kind: 'text',
  content: 'text',
  session_id: 'text',
  event_time: 'bigint',
  created_at: 'bigint',
  valid_until: 'bigint',
  confidence: 'float8',
  access_count: 'int',
  last_accessed: 'bigint',
  decay_rate: 'float8',
  source_ids: 'text',
  source_role: 'text',
  tags: 'text',
  attributes: 'text',
  scope: 'text',
  speaker: 'text',
  source_message_id: 'text',
  seq: 'int',
};
const COLS = MEMORY_COLUMNS.join(', ');
/** unnest($1::text[], $2::bigint[], …) AS u(id, kind, …): the rows of a batch as one relation. */
const ARRAYS = `unnest(${MEMORY_COLUMNS.map((c, i) => `$${i + 1}::${TYPES[c]}[]`).join(', ')})`;
const UNNEST = `${ARRAYS} AS u(${COLS})`;
/** The same, numbered: inserted in the order given, so `pos` follows the order rows were stored in the cache. */
const UNNEST_NUMBERED = `${ARRAYS} WITH ORDINALITY AS u(${COLS}, ord)`;
const columnsOf = (rows: StoredMemory[]) => MEMORY_COLUMNS.map((c) => rows.map((r) => r[c]));

/**
 * How a change meets the row another process changed: retirement is for good (the first
 * valid_until stays), access only grows; confidence, decay and attributes take this write.
 */
const MERGE = `valid_until = coalesce(m.valid_until, u.valid_until), access_count = greatest(m.access_count, u.access_count),
  last_accessed = greatest(m.last_accessed, u.last_accessed), confidence = u.confidence, decay_rate = u.decay_rate, attributes = u.attributes`;

export async function feedInfo(db: Sql): Promise<FeedInfo> {
  const { rows } = await db.query<{ identity: string; pruned_through: string; head: string | null }>(
    'SELECT identity, pruned_through, (SELECT max(seq) FROM memory_changes) AS head FROM memory_feed',
  );
  const r = rows[0]!;
  const prunedThrough = Number(r.pruned_through);
  return { identity: r.identity, prunedThrough, head: Math.max(prunedThrough, Number(r.head ?? 0)) };
}

/** Writes one batch and its change rows in one transaction (safe to run again: upserts and deletes by key). */
export async function writeBatch(db: Database, b: Batch): Promise<void> {
  await db.tx(async (sql) => {
    // Numbers are taken under this lock, so they commit in order (a reader never meets a smaller one later).
    await sql.query('SELECT 1 FROM memory_feed FOR UPDATE');
    const inserts = b.memories.flatMap((m) => (m.row && m.inserted ? [m.row] : []));
    const updates = b.memories.flatMap((m) => (m.row && !m.inserted ? [m.row] : []));
    const gone = b.memories.filter((m) => !m.row).map((m) => m.id);
    if (inserts.length > 0) {
      await sql.query(
        `INSERT INTO memory_rows AS m (${COLS}) SELECT ${COLS} FROM ${UNNEST_NUMBERED} ORDER BY ord
         ON CONFLICT (id) DO UPDATE SET ${MERGE.replaceAll('u.', 'excluded.')}`,
        columnsOf(inserts),
      );
    }
    // Only an update: a row another process erased is not brought back.
    if (updates.length > 0) await sql.query(`UPDATE memory_rows AS m SET ${MERGE} FROM ${UNNEST} WHERE m.id = u.id`, columnsOf(updates));
    if (gone.length > 0) await sql.query('DELETE FROM memory_rows WHERE id = ANY($1::text[])', [gone]);
    const marks = b.sessions.flatMap((s) => (s.mark ? [s.mark] : []));
    if (marks.length > 0) {
      await sql.query(
        `INSERT INTO memory_sessions AS s (session_id, scope, first_seen_at, consolidated_at)
           SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
         ON CONFLICT (session_id) DO UPDATE SET scope = coalesce(excluded.scope, s.scope),
           first_seen_at = least(s.first_seen_at, excluded.first_seen_at), consolidated_at = coalesce(excluded.consolidated_at, s.consolidated_at)`,
        [marks.map((m) => m.session_id), marks.map((m) => m.scope), marks.map((m) => m.first_seen_at), marks.map((m) => m.consolidated_at)],
      );
    }
    const noMark = b.sessions.filter((s) => !s.mark).map((s) => s.id);
    if (noMark.length > 0) await sql.query('DELETE FROM memory_sessions WHERE session_id = ANY($1::text[])', [noMark]);
    const set = b.meta.filter((m) => m.value !== null);
    if (set.length > 0) {
      await sql.query(
        'INSERT INTO memory_meta (key, value) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
        [set.map((m) => m.key), set.map((m) => m.value)],
      );
    }
    const unset = b.meta.filter((m) => m.value === null).map((m) => m.key);
    if (unset.length > 0) await sql.query('DELETE FROM memory_meta WHERE key = ANY($1::text[])', [unset]);
    for (const v of b.vectors) {
      // A vector of a memory gone meanwhile is not kept (the reference would refuse it).
      if (v.vector)
        await sql.query(
          'INSERT INTO memory_vectors (memory_id, vector) SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM memory_rows WHERE id = $1) ON CONFLICT (memory_id) DO UPDATE SET vector = excluded.vector',
          [v.id, v.vector],
        );
      else await sql.query('DELETE FROM memory_vectors WHERE memory_id = $1', [v.id]);
    }
    const changes: Array<[ChangeKind, string]> = [
      ...b.memories.map((m): [ChangeKind, string] => ['memory', m.id]),
      ...b.sessions.map((s): [ChangeKind, string] => ['session', s.id]),
      ...b.meta.map((m): [ChangeKind, string] => ['meta', m.key]),
      ...b.vectors.map((v): [ChangeKind, string] => ['vector', v.id]),
    ];
    await sql.query('INSERT INTO memory_changes (kind, key) SELECT * FROM unnest($1::text[], $2::text[])', [
      changes.map((c) => c[0]),
      changes.map((c) => c[1]),
    ]);
    await sql.query(`SELECT pg_notify('${FEED_CHANNEL}', '')`);
  });
}

/** The changes after `after`, in order, at most `max`. */
export async function changesAfter(db: Sql, after: number, max: number): Promise<Array<{ seq: number; kind: ChangeKind; key: string }>> {
  const { rows } = await db.query<{ seq: string; kind: ChangeKind; key: string }>(
    'SELECT seq, kind, key FROM memory_changes WHERE seq > $1 ORDER BY seq LIMIT $2',
    [after, max],
  );
  return rows.map((r) => ({ seq: Number(r.seq), kind: r.kind, key: r.key }));
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** A row as the cache stores it (bigint columns come back from pg as text). */
export function toStored(r: Record<string, unknown>): StoredMemory {
  return {
    ...(r as unknown as StoredMemory),
    event_time: Number(r.event_time),
    created_at: Number(r.created_at),
    valid_until: num(r.valid_until),
    last_accessed: num(r.last_accessed),
    seq: num(r.seq),
  };
}

/** The current state of the keys these changes name (rows in the order they were first stored). */
export async function stateOf(db: Sql, changes: Array<{ kind: ChangeKind; key: string }>): Promise<FeedState> {
  const keys = (kind: ChangeKind) => [...new Set(changes.filter((c) => c.kind === kind).map((c) => c.key))];
  const state: FeedState = { memories: new Map(), sessions: new Map(), meta: new Map(), vectors: new Map() };
  const ids = keys('memory');
  if (ids.length > 0) {
    const { rows } = await db.query(`SELECT ${COLS} FROM memory_rows WHERE id = ANY($1::text[]) ORDER BY pos`, [ids]);
    for (const r of rows) state.memories.set(r.id as string, toStored(r));
    for (const id of ids) if (!state.memories.has(id)) state.memories.set(id, null);
  }
  const sessions = keys('session');
  if (sessions.length > 0) {
    const { rows } = await db.query('SELECT session_id, scope, first_seen_at, consolidated_at FROM memory_sessions WHERE session_id = ANY($1::text[])', [
      sessions,
    ]);
    for (const r of rows) state.sessions.set(r.session_id as string, toMark(r));
    for (const id of sessions) if (!state.sessions.has(id)) state.sessions.set(id, null);
  }
  const meta = keys('meta');
  if (meta.length > 0) {
    const { rows } = await db.query<{ key: string; value: string }>('SELECT key, value FROM memory_meta WHERE key = ANY($1::text[])', [meta]);
    for (const r of rows) state.meta.set(r.key, r.value);
    for (const k of meta) if (!state.meta.has(k)) state.meta.set(k, null);
  }
  const vectors = keys('vector');
  if (vectors.length > 0) {
    const { rows } = await db.query<{ memory_id: string; vector: Buffer }>('SELECT memory_id, vector FROM memory_vectors WHERE memory_id = ANY($1::text[])', [
      vectors,
    ]);
    for (const r of rows) state.vectors.set(r.memory_id, r.vector);
    for (const id of vectors) if (!state.vectors.has(id)) state.vectors.set(id, null);
  }
  return state;
}

export function toMark(r: Record<string, unknown>): SessionMark {
  return {
    session_id: r.session_id as string,
    scope: (r.scope as string | null) ?? null,
    first_seen_at: Number(r.first_seen_at),
    consolidated_at: num(r.consolidated_at),
  };
}

/**
 * Everything, in one snapshot, with the feed position it stands for: `take` gets the rows page by
 * page (memories in the order first stored, then sessions, metadata and vectors as states).
 */
export async function snapshot(db: Database, take: (state: FeedState) => void, page = 5000): Promise<FeedInfo> {
  return db.tx(
    async (sql) => {
      const info = await feedInfo(sql);
      const { rows: meta } = await sql.query<{ key: string; value: string }>('SELECT key, value FROM memory_meta');
      const { rows: marks } = await sql.query('SELECT session_id, scope, first_seen_at, consolidated_at FROM memory_sessions');
      // Metadata first: the vector table is made at the stored size before vectors arrive.
      take({
        memories: new Map(),
        sessions: new Map(marks.map((r) => [r.session_id as string, toMark(r)])),
        meta: new Map(meta.map((r) => [r.key, r.value])),
        vectors: new Map(),
      });
      for (let pos = 0; ; ) {
        const { rows } = await sql.query(`SELECT pos, ${COLS} FROM memory_rows WHERE pos > $1 ORDER BY pos LIMIT $2`, [pos, page]);
        if (rows.length === 0) break;
        pos = Number(rows.at(-1)!.pos);
        take({ memories: new Map(rows.map((r) => [r.id as string, toStored(r)])), sessions: new Map(), meta: new Map(), vectors: new Map() });
      }
      for (let after = ''; ; ) {
        const { rows } = await sql.query<{ memory_id: string; vector: Buffer }>(
          'SELECT memory_id, vector FROM memory_vectors WHERE memory_id > $1 ORDER BY memory_id LIMIT $2',
          [after, page],
        );
        if (rows.length === 0) break;
        after = rows.at(-1)!.memory_id;
        take({ memories: new Map(), sessions: new Map(), meta: new Map(), vectors: new Map(rows.map((r) => [r.memory_id, r.vector])) });
      }
      return info;
    },
    { isolation: 'repeatable read' },
  );
}

/** Deletes changes older than KEEP_CHANGES_DAYS (a cache that was away longer is rebuilt). */
export async function pruneChanges(db: Database): Promise<void> {
  await db.tx(async (sql) => {
    await sql.query('SELECT 1 FROM memory_feed FOR UPDATE');
    const { rows } = await sql.query<{ upto: string | null }>(
      `WITH gone AS (DELETE FROM memory_changes WHERE at < now() - make_interval(days => ${KEEP_CHANGES_DAYS}) RETURNING seq) SELECT max(seq) AS upto FROM gone`,
    );
    const upto = rows[0]?.upto;
    if (upto) await sql.query('UPDATE memory_feed SET pruned_through = greatest(pruned_through, $1)', [upto]);
  });
}
