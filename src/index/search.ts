/**
 * Hybrid search over the index (seed 003 "Search"), always inside one scope:
 *   - full text: FTS5 BM25 over the stemmed words of this scope only (fts.ts), query words OR-ed;
 *   - entities: memories linked to an entity named in the query (alias lookup of the query's
 *     word n-grams, so "dana" finds "Dana");
 *   - recency among the full-text hits, so the latest of several statements ranks up
 *     (a preference that changed);
 *   - neighbours: the next messages of the same session after a strong hit, for facts a user
 *     states over two messages;
 *   - vectors (sqlite-vec KNN) when embeddings are on.
 * Lists are merged by reciprocal rank fusion, score = Σ 1 / (60 + rank).
 */
import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';
import { SCOPED_FTS, ScopeCodes, scopePrefix, scopedTerm } from './fts.js';
import type { MemoryKind } from './repository.js';
import { analyze, ftsOrQuery, ngrams } from './query.js';

export const RRF_K = 60;

export interface SearchOptions {
  scope: string;
  kinds?: MemoryKind[];
  excludeSessionId?: string | undefined;
  limit?: number;
  /** Query embedding, when vector search is on. */
  vector?: Float32Array | undefined;
}

export interface SearchResult {
  id: string;
  kind: MemoryKind;
  content: string;
  /** ISO 8601 event time. */
  date: string;
  speaker: string | null;
  role: string | null;
  sessionId: string | null;
  score: number;
  /** The channel message ids this result stands for (episodes: its own message). */
  sourceMessageIds: string[];
  confidence: number;
  /** Which ranked lists brought this hit (text, entity, recent, neighbour, vector): why it ranked. */
  lists?: string[];
}

export interface MemoryRow {
  id: string;
  kind: MemoryKind;
  content: string;
  event_time: number;
  speaker: string | null;
  source_role: string | null;
  session_id: string | null;
  source_message_id: string | null;
  source_ids: string;
  confidence: number;
  seq: number | null;
}

const CANDIDATES = 60;
export const ROW_COLUMNS = 'm.id, m.kind, m.content, m.event_time, m.speaker, m.source_role, m.session_id, m.source_message_id, m.source_ids, m.confidence, m.seq';
const NEIGHBOUR_SEEDS = 5;
/** Entities linked to more memories than this in one chat are too common to rank by. */
const MAX_ENTITY_LINKS = 200;

export class HybridSearch {
  private readonly cache = new Map<string, Statement>();
  private readonly codes: ScopeCodes;

  constructor(
    private readonly db: Db,
    private readonly vectorTable: () => boolean,
  ) {
    this.codes = new ScopeCodes(db);
  }

  private stmt(sql: string): Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }

  private filter(opts: SearchOptions, alias = 'm'): { sql: string; params: unknown[] } {
    const kinds = opts.kinds?.length ? opts.kinds : ['episode', 'fact', 'reflection'];
    let sql = ` AND ${alias}.scope = ? AND ${alias}.valid_until IS NULL AND ${alias}.kind IN (${kinds.map(() => '?').join(',')})`;
    const params: unknown[] = [opts.scope, ...kinds];
    if (opts.excludeSessionId) {
      sql += ` AND (${alias}.session_id IS NULL OR ${alias}.session_id != ?)`;
      params.push(opts.excludeSessionId);
    }
    return { sql, params };
  }

  /** Plain BM25 over single messages (unicode61, no stemming): the baseline the eval compares with. */
  bm25Only(query: string, opts: SearchOptions): MemoryRow[] {
    const match = ftsOrQuery(analyze(query).words.filter((w) => w.length >= 2));
    if (!match) return [];
    const f = this.filter(opts);
    return this.stmt(
      `SELECT ${ROW_COLUMNS}
       FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid
       WHERE memories_fts MATCH ?${f.sql} ORDER BY bm25(memories_fts) LIMIT ?`,
    ).all(match, ...f.params, opts.limit ?? 10) as MemoryRow[];
  }

  /**
   * Stemmed BM25 over this scope's own words (fts.ts): only the chat's posting lists are read.
   * The scope filter on `memories` stays as the guarantee, not the means.
   */
  private scopedText(terms: string[], opts: SearchOptions, limit: number): MemoryRow[] {
    const code = this.codes.lookup(opts.scope);
    if (code === undefined) return [];
    const prefix = scopePrefix(code);
    const phrases = terms.map((t) => scopedTerm(prefix, t.replace(/[\u0000-\u001f]/g, ''))).filter((p): p is string => p !== null);
    if (phrases.length === 0) return [];
    const match = phrases.join(' OR ');
    // FTS5 ranks the chat's matches on its own (its top-N path), and only the best few rows
    // are then read from `memories`: joining first would read every matching row of a
    // 1M-memory file (hundreds per query) just to drop most of them.
    const top = this.stmt(`SELECT rowid FROM ${SCOPED_FTS} WHERE ${SCOPED_FTS} MATCH ? ORDER BY rank LIMIT ?`)
      .all(match, limit * 3)
      .map((r) => (r as { rowid: number }).rowid);
    if (top.length === 0) return [];
    const f = this.filter(opts);
    const rows = this.stmt(`SELECT m.rowid AS rid, ${ROW_COLUMNS} FROM memories m WHERE m.rowid IN (${top.map(() => '?').join(',')})${f.sql}`)
      .all(...top, ...f.params) as Array<MemoryRow & { rid: number }>;
    if (rows.length >= limit || top.length < limit * 3) {
      const order = new Map(top.map((id, i) => [id, i]));
      return rows.sort((a, b) => order.get(a.rid)! - order.get(b.rid)!).slice(0, limit).map(({ rid: _, ...row }) => row);
    }
    // The filters (kind, superseded, this conversation) dropped most of the best matches:
    // rank again with the filters applied to every match — slower, always complete.
    return this.stmt(
      `SELECT ${ROW_COLUMNS}
       FROM ${SCOPED_FTS} JOIN memories m ON m.rowid = ${SCOPED_FTS}.rowid
       WHERE ${SCOPED_FTS} MATCH ?${f.sql} ORDER BY bm25(${SCOPED_FTS}) LIMIT ?`,
    ).all(match, ...f.params, limit) as MemoryRow[];
  }

  private entityHits(words: string[], opts: SearchOptions): MemoryRow[] {
    // Bounded: a pasted document must not turn into thousands of SQL parameters.
    const grams = ngrams(words.slice(0, 40)).filter((g) => g.length >= 2).slice(0, 300);
    if (grams.length === 0) return [];
    const count = this.stmt('SELECT COUNT(*) AS n FROM (SELECT 1 FROM memory_entities WHERE scope = ? AND entity_id = ? LIMIT ?)');
    // An entity named in most of a chat's messages tells nothing about which one is wanted
    // (like a stop word); only the rarer ones are looked up, which also keeps this fast.
    const ids = this.stmt(`SELECT DISTINCT entity_id FROM entity_aliases WHERE alias IN (${grams.map(() => '?').join(',')})`)
      .all(...grams)
      .map((r) => (r as { entity_id: string }).entity_id)
      .filter((id) => (count.get(opts.scope, id, MAX_ENTITY_LINKS + 1) as { n: number }).n <= MAX_ENTITY_LINKS);
    if (ids.length === 0) return [];
    const f = this.filter(opts);
    // Memories naming more of the query's entities first, then the newest. CROSS JOIN keeps
    // the links (at most MAX_ENTITY_LINKS per entity) as the outer loop: left to itself, the
    // planner walked every memory in id order to serve the GROUP BY (47 ms at 1M memories).
    return this.stmt(
      `SELECT ${ROW_COLUMNS}
       FROM memory_entities me CROSS JOIN memories m ON m.id = me.memory_id
       WHERE me.scope = ? AND me.entity_id IN (${ids.map(() => '?').join(',')})${f.sql}
       GROUP BY me.memory_id ORDER BY COUNT(*) DESC, m.event_time DESC LIMIT ?`,
    ).all(opts.scope, ...ids, ...f.params, CANDIDATES) as MemoryRow[];
  }

  private neighbours(seeds: MemoryRow[], opts: SearchOptions): MemoryRow[] {
    const out: MemoryRow[] = [];
    const f = this.filter(opts);
    const st = this.stmt(
      `SELECT ${ROW_COLUMNS}
       FROM memories m WHERE m.session_id = ? AND m.seq > ? AND m.seq <= ? AND m.source_role = 'user'${f.sql} ORDER BY m.seq LIMIT 2`,
    );
    for (const s of seeds) {
      if (s.kind !== 'episode' || s.seq === null || !s.session_id) continue;
      out.push(...(st.all(s.session_id, s.seq, s.seq + 4, ...f.params) as MemoryRow[]));
    }
    return out;
  }

  private vectorHits(vector: Float32Array, opts: SearchOptions): MemoryRow[] {
    if (!this.vectorTable()) return [];
    const knn = this.stmt('SELECT memory_id, distance FROM vec_memories WHERE embedding MATCH ? AND k = ?').all(
      Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength),
      CANDIDATES * 3,
    ) as Array<{ memory_id: string }>;
    if (knn.length === 0) return [];
    const f = this.filter(opts);
    const rows = this.stmt(
      `SELECT ${ROW_COLUMNS}
       FROM memories m WHERE m.id IN (${knn.map(() => '?').join(',')})${f.sql}`,
    ).all(...knn.map((k) => k.memory_id), ...f.params) as MemoryRow[];
    const order = new Map(knn.map((k, i) => [k.memory_id, i]));
    return rows.sort((a, b) => order.get(a.id)! - order.get(b.id)!).slice(0, CANDIDATES);
  }

  search(query: string, opts: SearchOptions): SearchResult[] {
    const limit = opts.limit ?? 10;
    const q = analyze(query);
    if (!ftsOrQuery(q.terms)) return opts.vector ? fuse([{ rows: this.vectorHits(opts.vector, opts), weight: 1 }], limit) : [];
    const text = this.scopedText(q.terms, opts, CANDIDATES);
    const userText = text.filter((r) => r.source_role !== 'assistant');
    const lists: Weighted[] = [
      { rows: text, weight: 1, name: 'text' },
      { rows: this.entityHits(q.words, opts), weight: 0.6, name: 'entity' },
      // Among the user's matching statements, the newest counts as much as the best match: a
      // preference said again later replaces the earlier one.
      { rows: [...userText.slice(0, 20)].sort((a, b) => b.event_time - a.event_time), weight: 1, name: 'recent' },
      { rows: this.neighbours(userText.slice(0, NEIGHBOUR_SEEDS), opts), weight: 0.3, name: 'neighbour' },
    ];
    if (opts.vector) lists.push({ rows: this.vectorHits(opts.vector, opts), weight: 1, name: 'vector' });
    return fuse(lists, limit);
  }
}

export interface Weighted {
  rows: MemoryRow[];
  weight: number;
  /** Reported in SearchResult.lists (the memory page shows why a hit ranked). */
  name?: string;
}

/**
 * Weighted reciprocal rank fusion (k = 60): score = Σ weight / (60 + rank). Side lists
 * (entities, recency, neighbours) weigh less than the text match, so a message pulled in only as
 * a neighbour never outranks the hit that brought it. A fact's confidence scales its score: a
 * superseded fact (0.3) ranks below its replacement.
 */
export function fuse(lists: Weighted[], limit: number): SearchResult[] {
  const acc = new Map<string, { row: MemoryRow; score: number; lists: string[] }>();
  for (const { rows, weight, name } of lists) {
    rows.forEach((row, rank) => {
      const e = acc.get(row.id) ?? { row, score: 0, lists: [] };
      e.score += weight / (RRF_K + rank + 1);
      if (name && !e.lists.includes(name)) e.lists.push(name);
      acc.set(row.id, e);
    });
  }
  for (const e of acc.values()) {
    e.score *= 0.5 + 0.5 * Math.max(0, Math.min(1, e.row.confidence ?? 1));
    // What the user said outranks the assistant's echo of it: memory questions are about the user.
    if (e.row.source_role === 'assistant') e.score *= 0.5;
  }
  return [...acc.values()]
    .sort((a, b) => b.score - a.score || b.row.event_time - a.row.event_time)
    .slice(0, limit)
    .map(({ row, score, lists: from }) => ({ ...toResult(row, score), lists: from }));
}

export function toResult(row: MemoryRow, score: number): SearchResult {
  const sources = row.source_message_id ? [row.source_message_id] : [];
  return {
    id: row.id,
    kind: row.kind,
    content: row.content,
    date: new Date(row.event_time * 1000).toISOString(),
    speaker: row.speaker,
    role: row.source_role,
    sessionId: row.session_id,
    score,
    sourceMessageIds: sources,
    confidence: row.confidence,
  };
}
