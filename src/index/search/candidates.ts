/**
 * The candidate lists of a search, read from SQLite (seed 003 "Search"): stemmed BM25 over one
 * scope's words (fts.ts), messages written on the dates a question names, the turns around the
 * best hits, entity links and nearest vectors, and the counts the ranking needs. Only reads;
 * every query is kept inside one scope. search.ts decides what to ask and how to rank it.
 */
import type { Db } from '../store/db.js';
import { Statements } from '../store/statements.js';
import { SCOPED_FTS, ScopeCodes, scopePrefix, scopedTerm } from '../store/fts.js';
import type { MemoryRow } from '../store/repository.js';
import { FUNCTION_WORDS, ngrams, tokenize } from '../store/query.js';
import type { DateRange } from './dates.js';
import type { RankWeights } from './rank.js';
import type { WordUse } from './speakers.js';
import { similarityOf, vectorLayout } from '../store/vectors.js';
import { ROW_COLUMNS, scopeFilter, type Row, type SearchOptions } from './result.js';

/** Side lists (entities, vectors) read per query. */
const SIDE_CANDIDATES = 60;
/** Entities linked to more memories than this in one chat are too common to rank by. */
const MAX_ENTITY_LINKS = 200;
/** Messages on a named date considered (a busy day in a group chat has more). */
const MAX_DATE_ROWS = 500;

export class SqliteCandidates {
  private readonly q: Statements;
  private readonly codes: ScopeCodes;

  constructor(
    private readonly db: Db,
    private readonly vectorTable: () => boolean,
  ) {
    this.codes = new ScopeCodes(db);
    this.q = new Statements(db);
  }

  matchQuery(scope: string, terms: string[]): string | null {
    const code = this.codes.lookup(scope);
    if (code === undefined) return null;
    const prefix = scopePrefix(code);
    const phrases = terms.map((t) => scopedTerm(prefix, t.replace(/[\u0000-\u001f]/g, ''))).filter((p): p is string => p !== null);
    return phrases.length > 0 ? [...new Set(phrases)].join(' OR ') : null;
  }

  /**
   * The eval's baseline (shared/datasets/README.md), nothing else: porter-stemmed FTS5 over
   * single messages, the question's words minus function words OR-ed, `ORDER BY bm25`. The
   * scoped table is that index (the prefix only keeps chats apart; df counts this chat's
   * messages).
   */
  bm25Only(query: string, opts: SearchOptions): MemoryRow[] {
    const match = this.matchQuery(opts.scope, [...new Set(tokenize(query).filter((w) => !FUNCTION_WORDS.has(w)))]);
    if (!match) return [];
    const f = scopeFilter({ ...opts, kinds: ['episode'] });
    return this.q
      .get(
        `SELECT ${ROW_COLUMNS}
       FROM ${SCOPED_FTS} JOIN memories m ON m.rowid = ${SCOPED_FTS}.rowid
       WHERE ${SCOPED_FTS} MATCH ?${f.sql} ORDER BY bm25(${SCOPED_FTS}) LIMIT ?`,
      )
      .all(match, ...f.params, opts.limit ?? 10) as MemoryRow[];
  }

  /**
   * Stemmed BM25 over this scope's own words (fts.ts): only the chat's posting lists are read.
   * Returns rows with their BM25 score (higher is better). The scope filter on `memories`
   * stays as the guarantee, not the means.
   */
  text(match: string, opts: SearchOptions, limit: number): Array<{ row: Row; score: number }> {
    // FTS5 ranks the chat's matches on its own (its top-N path), and only the best few rows
    // are then read from `memories`: joining first would read every matching row of a
    // 1M-memory file (hundreds per query) just to drop most of them.
    const top = this.q.get(`SELECT rowid, rank FROM ${SCOPED_FTS} WHERE ${SCOPED_FTS} MATCH ? ORDER BY rank LIMIT ?`).all(match, limit * 2) as Array<{
      rowid: number;
      rank: number;
    }>;
    if (top.length === 0) return [];
    const f = scopeFilter(opts);
    // Which of them pass the filters (rowids only), then the rows of the best `limit` of those.
    const pass = new Set(
      this.q
        .get(`SELECT m.rowid FROM memories m WHERE m.rowid IN (${top.map(() => '?').join(',')})${f.sql}`)
        .pluck()
        .all(...top.map((t) => t.rowid), ...f.params) as number[],
    );
    if (pass.size >= limit || top.length < limit * 2) {
      const best = top.filter((t) => pass.has(t.rowid)).slice(0, limit);
      if (best.length === 0) return [];
      const rows = this.q.rows<Row>(
        `SELECT m.rowid AS rid, ${ROW_COLUMNS} FROM memories m WHERE m.rowid IN (${best.map(() => '?').join(',')})`,
        ...best.map((t) => t.rowid),
      );
      const byRid = new Map(rows.map((r) => [r.rid, r]));
      return best.map((t) => ({ row: byRid.get(t.rowid)!, score: -t.rank }));
    }
    // The filters (kind, superseded, this conversation) dropped most of the best matches:
    // rank again with the filters applied to every match — slower, always complete.
    return this.q
      .rows<Row & { rank: number }>(
        `SELECT m.rowid AS rid, ${ROW_COLUMNS}, bm25(${SCOPED_FTS}) AS rank
       FROM ${SCOPED_FTS} JOIN memories m ON m.rowid = ${SCOPED_FTS}.rowid
       WHERE ${SCOPED_FTS} MATCH ?${f.sql} ORDER BY bm25(${SCOPED_FTS}) LIMIT ?`,
        match,
        ...f.params,
        limit,
      )
      .map(({ rank: r, ...row }) => ({ row, score: -r }));
  }

  /**
   * Messages written inside the named dates that share a word with the question, with their
   * BM25 score and how surely they belong to the date (1 on the day; `dateNext` on the day after,
   * where people tell what they did "yesterday"). With `dateSpeaker`, the named speakers'
   * messages of those days join even when they share no word ("where was Ann on 31 Dec?").
   */
  onDates(
    match: string,
    dates: DateRange[],
    speakers: ReadonlySet<string>,
    w: RankWeights,
    opts: SearchOptions,
  ): Array<{ row: Row; score: number; on: number }> {
    const f = scopeFilter(opts);
    const inRange = this.q.get(
      `SELECT m.rowid AS rid, ${ROW_COLUMNS} FROM memories m WHERE m.scope = ? AND m.event_time >= ? AND m.event_time < ?${f.sql} LIMIT ?`,
    );
    const rows = new Map<number, { row: Row; on: number }>();
    const read = (from: number, to: number, on: number) => {
      for (const r of inRange.all(opts.scope, from, to, ...f.params, MAX_DATE_ROWS) as Row[]) {
        const had = rows.get(r.rid);
        if (!had || had.on < on) rows.set(r.rid, { row: r, on });
      }
    };
    for (const d of dates) {
      read(d.from, d.to, 1);
      if (!d.month && w.dateNext > 0) read(d.to, d.to + 86_400, w.dateNext);
    }
    if (rows.size === 0) return [];
    const ids = [...rows.keys()].slice(0, MAX_DATE_ROWS * 2);
    const scored = this.db
      .prepare(`SELECT rowid, rank FROM ${SCOPED_FTS} WHERE ${SCOPED_FTS} MATCH ? AND rowid IN (${ids.map(() => '?').join(',')})`)
      .all(match, ...ids) as Array<{ rowid: number; rank: number }>;
    const out = scored.map((s) => ({ row: rows.get(s.rowid)!.row, score: -s.rank, on: rows.get(s.rowid)!.on }));
    if (w.dateSpeaker && speakers.size > 0) {
      const have = new Set(scored.map((s) => s.rowid));
      for (const id of ids) {
        const r = rows.get(id)!;
        if (!have.has(id) && r.row.speaker && speakers.has(r.row.speaker)) out.push({ row: r.row, score: 0, on: r.on });
      }
    }
    return out;
  }

  /**
   * The turns from `before` turns before to `after` turns after each seed, in its conversation,
   * read in one query (overlapping windows merged, so each row is read once); `near(seed, b, a)`
   * then gives a narrower window of one seed (not the seed itself), in turn order.
   */
  turnsAround(seeds: Row[], before: number, after: number, opts: SearchOptions): (seed: Row, b: number, a: number) => Row[] {
    const bySession = new Map<string, Array<[number, number]>>();
    for (const s of seeds) {
      if (s.kind !== 'episode' || s.seq === null || !s.session_id) continue;
      const list = bySession.get(s.session_id) ?? [];
      list.push([s.seq - before, s.seq + after]);
      bySession.set(s.session_id, list);
    }
    const params: unknown[] = [];
    for (const [sid, list] of bySession) {
      list.sort((x, y) => x[0] - y[0]);
      let [lo, hi] = list[0]!;
      for (const [a, b] of list.slice(1)) {
        if (a > hi + 1) {
          params.push(sid, lo, hi);
          [lo, hi] = [a, b];
        } else hi = Math.max(hi, b);
      }
      params.push(sid, lo, hi);
    }
    const rows = new Map<string, Row[]>();
    if (params.length > 0) {
      const f = scopeFilter(opts);
      // CROSS JOIN keeps the windows as the outer loop: each is a range read on (session_id, seq).
      const read = this.q.rows<Row>(
        `WITH w(sid, lo, hi) AS (VALUES ${Array.from({ length: params.length / 3 }, () => '(?, ?, ?)').join(', ')})
         SELECT m.rowid AS rid, ${ROW_COLUMNS} FROM w CROSS JOIN memories m ON m.session_id = w.sid AND m.seq >= w.lo AND m.seq <= w.hi
         WHERE 1${f.sql}`,
        ...params,
        ...f.params,
      );
      for (const r of read) {
        const list = rows.get(r.session_id!) ?? [];
        list.push(r);
        rows.set(r.session_id!, list);
      }
      for (const list of rows.values()) list.sort((x, y) => x.seq! - y.seq!);
    }
    return (s, b, a) =>
      s.kind !== 'episode' || s.seq === null || !s.session_id
        ? []
        : (rows.get(s.session_id) ?? []).filter((r) => r.seq !== s.seq && r.seq! >= s.seq! - b && r.seq! <= s.seq! + a);
  }

  entityHits(words: string[], opts: SearchOptions): Array<{ row: Row; links: number }> {
    // Bounded: a pasted document must not turn into thousands of SQL parameters.
    const grams = ngrams(words.slice(0, 40))
      .filter((g) => g.length >= 2)
      .slice(0, 300);
    if (grams.length === 0) return [];
    const count = this.q.get('SELECT COUNT(*) AS n FROM (SELECT 1 FROM memory_entities WHERE scope = ? AND entity_id = ? LIMIT ?)');
    // An entity named in most of a chat's messages tells nothing about which one is wanted
    // (like a stop word); only the rarer ones are looked up, which also keeps this fast.
    const ids = this.q
      .get(`SELECT DISTINCT entity_id FROM entity_aliases WHERE scope = ? AND alias IN (${grams.map(() => '?').join(',')})`)
      .all(opts.scope, ...grams)
      .map((r) => (r as { entity_id: string }).entity_id)
      .filter((id) => (count.get(opts.scope, id, MAX_ENTITY_LINKS + 1) as { n: number }).n <= MAX_ENTITY_LINKS);
    if (ids.length === 0) return [];
    const f = scopeFilter(opts);
    // Memories naming more of the query's entities first, then the newest. CROSS JOIN keeps
    // the links (at most MAX_ENTITY_LINKS per entity) as the outer loop: left to itself, the
    // planner walked every memory in id order to serve the GROUP BY (47 ms at 1M memories).
    return this.q
      .rows<Row & { links: number }>(
        `SELECT m.rowid AS rid, ${ROW_COLUMNS}, COUNT(*) AS links
       FROM memory_entities me CROSS JOIN memories m ON m.id = me.memory_id
       WHERE me.scope = ? AND me.entity_id IN (${ids.map(() => '?').join(',')})${f.sql}
       GROUP BY me.memory_id ORDER BY COUNT(*) DESC, m.event_time DESC, m.rowid DESC LIMIT ?`,
        opts.scope,
        ...ids,
        ...f.params,
        SIDE_CANDIDATES,
      )
      .map(({ links, ...row }) => ({ row, links: links / ids.length }));
  }

  vectorHits(vector: Float32Array, opts: SearchOptions): Array<{ row: Row; similarity: number }> {
    if (!this.vectorTable()) return [];
    const layout = vectorLayout(this.db);
    const query = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
    // Kept to this chat's partition where the table has one; more than needed either way, as
    // the filters below (kind, superseded, this conversation) still drop some.
    const knn = (
      layout.partitioned
        ? this.q.get('SELECT memory_id, distance FROM vec_memories WHERE embedding MATCH ? AND k = ? AND scope = ?').all(query, SIDE_CANDIDATES * 3, opts.scope)
        : this.q.get('SELECT memory_id, distance FROM vec_memories WHERE embedding MATCH ? AND k = ?').all(query, SIDE_CANDIDATES * 3)
    ) as Array<{ memory_id: string; distance: number }>;
    if (knn.length === 0) return [];
    const f = scopeFilter(opts);
    const rows = this.q
      .get(`SELECT m.rowid AS rid, ${ROW_COLUMNS} FROM memories m WHERE m.id IN (${knn.map(() => '?').join(',')})${f.sql}`)
      .all(...knn.map((k) => k.memory_id), ...f.params) as Row[];
    const dist = new Map(knn.map((k) => [k.memory_id, k.distance]));
    return rows
      .map((row) => ({ row, similarity: similarityOf(dist.get(row.id)!, layout.metric) }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, SIDE_CANDIDATES);
  }

  /** How many of this scope's messages match (counted up to `cap`): a word's document frequency. */
  docCount(match: string, cap: number): number {
    return (this.q.get(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${SCOPED_FTS} WHERE ${SCOPED_FTS} MATCH ? LIMIT ?)`).get(match, cap) as { n: number }).n;
  }

  /** Up to 100 messages of the scope containing the word, each able to say whom it replies to. */
  wordUses(scope: string, word: string): WordUse[] {
    const match = this.matchQuery(scope, [word]);
    if (!match) return [];
    const rows = this.q.rows<{ content: string; speaker: string | null; session_id: string | null; seq: number | null }>(
      `SELECT m.content, m.speaker, m.session_id, m.seq FROM ${SCOPED_FTS} JOIN memories m ON m.rowid = ${SCOPED_FTS}.rowid
       WHERE ${SCOPED_FTS} MATCH ? AND m.scope = ? AND m.kind = 'episode' LIMIT 100`,
      match,
      scope,
    );
    const before = this.q.get(
      `SELECT speaker FROM memories m WHERE m.session_id = ? AND m.seq < ? AND m.seq >= ? AND m.speaker IS NOT ? ORDER BY m.seq DESC LIMIT 1`,
    );
    return rows.map((r) => ({
      content: r.content,
      speaker: r.speaker,
      repliesTo: () =>
        r.session_id && r.seq !== null ? ((before.get(r.session_id, r.seq, r.seq - 5, r.speaker) as { speaker: string } | undefined)?.speaker ?? null) : null,
    }));
  }

  /** The years this scope's memories span (for dates named without a year). */
  years(scope: string): number[] {
    // Two subqueries: each is one seek on (scope, event_time); MIN and MAX in one SELECT scan the scope's rows.
    const r = this.q
      .get('SELECT (SELECT MIN(event_time) FROM memories WHERE scope = ?) AS a, (SELECT MAX(event_time) FROM memories WHERE scope = ?) AS b')
      .get(scope, scope) as {
      a: number | null;
      b: number | null;
    };
    if (r.a === null || r.b === null) return [];
    const [a, b] = [new Date(r.a * 1000).getFullYear(), new Date(r.b * 1000).getFullYear()];
    return Array.from({ length: Math.min(b - a + 1, 5) }, (_, i) => b - Math.min(b - a, 4) + i);
  }
}
