/**
 * Hybrid search over the index (seed 003 "Search"), always inside one scope. Candidates come
 * from stemmed BM25 over this scope's words (fts.ts), messages written on a date the question
 * names, the replies to the best text hits and the turns around them, entity links and vectors
 * (when embeddings are on);
 * each candidate is then scored by rank.ts from what is known about it — how well its words
 * match, whether its speaker is the person the question names, whether it was said on that
 * date, whether it answers a message that matches, whether the turns around it match too.
 */
import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/db.js';
import { SCOPED_FTS, ScopeCodes, scopePrefix, scopedTerm } from '../store/fts.js';
import type { MemoryKind, MemoryRow } from '../store/repository.js';

export type { MemoryRow };
import { FUNCTION_WORDS, analyze, ngrams, tokenize } from '../store/query.js';
import { datesIn, type DateRange } from './dates.js';
import { askedFor, holds } from './answer-shape.js';
import { withOtherForms } from './irregular.js';
import { DEFAULT_WEIGHTS, rank, type Candidate, type RankWeights } from './rank.js';
import { SpeakerNames, type WordUse } from './speakers.js';
import { similarityOf, vectorLayout } from '../store/vectors.js';

export interface SearchOptions {
  scope: string;
  kinds?: MemoryKind[];
  excludeSessionId?: string | undefined;
  limit?: number;
  /** Query embedding, when vector search is on. */
  vector?: Float32Array | undefined;
  /** Ranking weights (the eval's tuning tries others; everything else uses the defaults). */
  weights?: RankWeights;
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
  /** BM25 of the result's own words for the query (about the IDF mass of the words it shares; 0 when only a side list brought it). */
  match?: number;
  /** Cosine similarity of the embeddings, when vectors are on. */
  similarity?: number;
  /** Which ranked lists brought this hit (text, entity, recent, neighbour, vector): why it ranked. */
  lists?: string[];
}

/** Text matches read per query: enough for the replies and neighbours of the best ones. */
const TEXT_CANDIDATES = 100;
/** Side lists (entities, vectors) read per query. */
const SIDE_CANDIDATES = 60;
export const ROW_COLUMNS =
  'm.id, m.kind, m.content, m.event_time, m.speaker, m.source_role, m.session_id, m.source_message_id, m.source_ids, m.confidence, m.seq';
/** Entities linked to more memories than this in one chat are too common to rank by. */
const MAX_ENTITY_LINKS = 200;
/** Messages on a named date considered (a busy day in a group chat has more). */
const MAX_DATE_ROWS = 500;

type Row = MemoryRow & { rid: number };

export class HybridSearch {
  private readonly cache = new Map<string, Statement>();
  private readonly codes: ScopeCodes;
  readonly speakers: SpeakerNames;

  constructor(
    private readonly db: Db,
    private readonly vectorTable: () => boolean,
  ) {
    this.codes = new ScopeCodes(db);
    this.speakers = new SpeakerNames(db, (scope, word) => this.wordUses(scope, word));
  }

  private stmt(sql: string): Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }

  private readonly rawCache = new Map<string, { st: Statement; names: string[] }>();

  /**
   * The rows of a query as objects built here from better-sqlite3's raw arrays: its own row
   * objects cost about 1.7 times as much CPU per row, and a search reads some 500 rows.
   */
  private rows<T>(sql: string, ...params: unknown[]): T[] {
    let r = this.rawCache.get(sql);
    if (!r) {
      const st = this.db.prepare(sql).raw(true);
      r = { st, names: st.columns().map((c) => c.name) };
      this.rawCache.set(sql, r);
    }
    const { st, names } = r;
    return (st.all(...params) as unknown[][]).map((a) => {
      const o: Record<string, unknown> = {};
      for (let i = 0; i < names.length; i++) o[names[i]!] = a[i];
      return o as T;
    });
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

  private matchQuery(scope: string, terms: string[]): string | null {
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
    const f = this.filter({ ...opts, kinds: ['episode'] });
    return this.stmt(
      `SELECT ${ROW_COLUMNS}
       FROM ${SCOPED_FTS} JOIN memories m ON m.rowid = ${SCOPED_FTS}.rowid
       WHERE ${SCOPED_FTS} MATCH ?${f.sql} ORDER BY bm25(${SCOPED_FTS}) LIMIT ?`,
    ).all(match, ...f.params, opts.limit ?? 10) as MemoryRow[];
  }

  /**
   * Stemmed BM25 over this scope's own words (fts.ts): only the chat's posting lists are read.
   * Returns rows with their BM25 score (higher is better). The scope filter on `memories`
   * stays as the guarantee, not the means.
   */
  private text(match: string, opts: SearchOptions, limit: number): Array<{ row: Row; score: number }> {
    // FTS5 ranks the chat's matches on its own (its top-N path), and only the best few rows
    // are then read from `memories`: joining first would read every matching row of a
    // 1M-memory file (hundreds per query) just to drop most of them.
    const top = this.stmt(`SELECT rowid, rank FROM ${SCOPED_FTS} WHERE ${SCOPED_FTS} MATCH ? ORDER BY rank LIMIT ?`).all(match, limit * 2) as Array<{
      rowid: number;
      rank: number;
    }>;
    if (top.length === 0) return [];
    const f = this.filter(opts);
    // Which of them pass the filters (rowids only), then the rows of the best `limit` of those.
    const pass = new Set(
      this.stmt(`SELECT m.rowid FROM memories m WHERE m.rowid IN (${top.map(() => '?').join(',')})${f.sql}`)
        .pluck()
        .all(...top.map((t) => t.rowid), ...f.params) as number[],
    );
    if (pass.size >= limit || top.length < limit * 2) {
      const best = top.filter((t) => pass.has(t.rowid)).slice(0, limit);
      if (best.length === 0) return [];
      const rows = this.rows<Row>(
        `SELECT m.rowid AS rid, ${ROW_COLUMNS} FROM memories m WHERE m.rowid IN (${best.map(() => '?').join(',')})`,
        ...best.map((t) => t.rowid),
      );
      const byRid = new Map(rows.map((r) => [r.rid, r]));
      return best.map((t) => ({ row: byRid.get(t.rowid)!, score: -t.rank }));
    }
    // The filters (kind, superseded, this conversation) dropped most of the best matches:
    // rank again with the filters applied to every match — slower, always complete.
    return this.rows<Row & { rank: number }>(
      `SELECT m.rowid AS rid, ${ROW_COLUMNS}, bm25(${SCOPED_FTS}) AS rank
       FROM ${SCOPED_FTS} JOIN memories m ON m.rowid = ${SCOPED_FTS}.rowid
       WHERE ${SCOPED_FTS} MATCH ?${f.sql} ORDER BY bm25(${SCOPED_FTS}) LIMIT ?`,
      match,
      ...f.params,
      limit,
    ).map(({ rank: r, ...row }) => ({ row, score: -r }));
  }

  /**
   * Messages written inside the named dates that share a word with the question, with their
   * BM25 score and how surely they belong to the date (1 on the day; `dateNext` on the day after,
   * where people tell what they did "yesterday"). With `dateSpeaker`, the named speakers'
   * messages of those days join even when they share no word ("where was Ann on 31 Dec?").
   */
  private onDates(
    match: string,
    dates: DateRange[],
    speakers: ReadonlySet<string>,
    w: RankWeights,
    opts: SearchOptions,
  ): Array<{ row: Row; score: number; on: number }> {
    const f = this.filter(opts);
    const inRange = this.stmt(
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
  private turnsAround(seeds: Row[], before: number, after: number, opts: SearchOptions): (seed: Row, b: number, a: number) => Row[] {
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
      const f = this.filter(opts);
      // CROSS JOIN keeps the windows as the outer loop: each is a range read on (session_id, seq).
      const read = this.rows<Row>(
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

  private entityHits(words: string[], opts: SearchOptions): Array<{ row: Row; links: number }> {
    // Bounded: a pasted document must not turn into thousands of SQL parameters.
    const grams = ngrams(words.slice(0, 40))
      .filter((g) => g.length >= 2)
      .slice(0, 300);
    if (grams.length === 0) return [];
    const count = this.stmt('SELECT COUNT(*) AS n FROM (SELECT 1 FROM memory_entities WHERE scope = ? AND entity_id = ? LIMIT ?)');
    // An entity named in most of a chat's messages tells nothing about which one is wanted
    // (like a stop word); only the rarer ones are looked up, which also keeps this fast.
    const ids = this.stmt(`SELECT DISTINCT entity_id FROM entity_aliases WHERE scope = ? AND alias IN (${grams.map(() => '?').join(',')})`)
      .all(opts.scope, ...grams)
      .map((r) => (r as { entity_id: string }).entity_id)
      .filter((id) => (count.get(opts.scope, id, MAX_ENTITY_LINKS + 1) as { n: number }).n <= MAX_ENTITY_LINKS);
    if (ids.length === 0) return [];
    const f = this.filter(opts);
    // Memories naming more of the query's entities first, then the newest. CROSS JOIN keeps
    // the links (at most MAX_ENTITY_LINKS per entity) as the outer loop: left to itself, the
    // planner walked every memory in id order to serve the GROUP BY (47 ms at 1M memories).
    return this.rows<Row & { links: number }>(
      `SELECT m.rowid AS rid, ${ROW_COLUMNS}, COUNT(*) AS links
       FROM memory_entities me CROSS JOIN memories m ON m.id = me.memory_id
       WHERE me.scope = ? AND me.entity_id IN (${ids.map(() => '?').join(',')})${f.sql}
       GROUP BY me.memory_id ORDER BY COUNT(*) DESC, m.event_time DESC, m.rowid DESC LIMIT ?`,
      opts.scope,
      ...ids,
      ...f.params,
      SIDE_CANDIDATES,
    ).map(({ links, ...row }) => ({ row, links: links / ids.length }));
  }

  private vectorHits(vector: Float32Array, opts: SearchOptions): Array<{ row: Row; similarity: number }> {
    if (!this.vectorTable()) return [];
    const layout = vectorLayout(this.db);
    const query = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
    // Kept to this chat's partition where the table has one; more than needed either way, as
    // the filters below (kind, superseded, this conversation) still drop some.
    const knn = (
      layout.partitioned
        ? this.stmt('SELECT memory_id, distance FROM vec_memories WHERE embedding MATCH ? AND k = ? AND scope = ?').all(query, SIDE_CANDIDATES * 3, opts.scope)
        : this.stmt('SELECT memory_id, distance FROM vec_memories WHERE embedding MATCH ? AND k = ?').all(query, SIDE_CANDIDATES * 3)
    ) as Array<{ memory_id: string; distance: number }>;
    if (knn.length === 0) return [];
    const f = this.filter(opts);
    const rows = this.stmt(`SELECT m.rowid AS rid, ${ROW_COLUMNS} FROM memories m WHERE m.id IN (${knn.map(() => '?').join(',')})${f.sql}`).all(
      ...knn.map((k) => k.memory_id),
      ...f.params,
    ) as Row[];
    const dist = new Map(knn.map((k) => [k.memory_id, k.distance]));
    return rows
      .map((row) => ({ row, similarity: similarityOf(dist.get(row.id)!, layout.metric) }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, SIDE_CANDIDATES);
  }

  /**
   * Pseudo-relevance feedback: words the best text hits share (in at least two of them), not
   * in the query, weighted by how rare they are in this chat.
   */
  private feedbackTerms(top: Candidate[], query: Set<string>, scope: string): string[] {
    if (top.length < 2) return [];
    const docs = new Map<string, number>();
    for (const c of top) for (const t of new Set(analyze(c.row.content).terms)) if (!query.has(t) && !/^\d+$/.test(t)) docs.set(t, (docs.get(t) ?? 0) + 1);
    const shared = [...docs]
      .filter(([, n]) => n >= 2)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20);
    const count = this.stmt(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${SCOPED_FTS} WHERE ${SCOPED_FTS} MATCH ? LIMIT 2000)`);
    const scored = shared.flatMap(([t, n]) => {
      const m = this.matchQuery(scope, [t]);
      if (!m) return [];
      const df = (count.get(m) as { n: number }).n;
      return [{ t, s: n * Math.log(1 + 2000 / (1 + df)) }];
    });
    return scored
      .sort((a, b) => b.s - a.s)
      .slice(0, 5)
      .map((x) => x.t);
  }

  /** Up to 100 messages of the scope containing the word, each able to say whom it replies to. */
  private wordUses(scope: string, word: string): WordUse[] {
    const match = this.matchQuery(scope, [word]);
    if (!match) return [];
    const rows = this.rows<{ content: string; speaker: string | null; session_id: string | null; seq: number | null }>(
      `SELECT m.content, m.speaker, m.session_id, m.seq FROM ${SCOPED_FTS} JOIN memories m ON m.rowid = ${SCOPED_FTS}.rowid
       WHERE ${SCOPED_FTS} MATCH ? AND m.scope = ? AND m.kind = 'episode' LIMIT 100`,
      match,
      scope,
    );
    const before = this.stmt(
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
  private years(scope: string): number[] {
    // Two subqueries: each is one seek on (scope, event_time); MIN and MAX in one SELECT scan the scope's rows.
    const r = this.stmt('SELECT (SELECT MIN(event_time) FROM memories WHERE scope = ?) AS a, (SELECT MAX(event_time) FROM memories WHERE scope = ?) AS b').get(
      scope,
      scope,
    ) as {
      a: number | null;
      b: number | null;
    };
    if (r.a === null || r.b === null) return [];
    const [a, b] = [new Date(r.a * 1000).getFullYear(), new Date(r.b * 1000).getFullYear()];
    return Array.from({ length: Math.min(b - a + 1, 5) }, (_, i) => b - Math.min(b - a, 4) + i);
  }

  search(query: string, opts: SearchOptions): SearchResult[] {
    const limit = opts.limit ?? 10;
    const w = opts.weights ?? DEFAULT_WEIGHTS;
    const q = analyze(query, w.framing);
    // A name in the question that is one of this chat's speakers says whose messages are
    // wanted; as a word it mostly matches the other person greeting them ("thanks, Ann!").
    const named = this.speakers.named(opts.scope, query);
    const terms =
      w.speakerTermDropped && named.terms.size > 0 && q.terms.some((t) => !named.terms.has(t)) ? q.terms.filter((t) => !named.terms.has(t)) : q.terms;
    // "what did Ann buy?" also looks for "bought": stemming does not join an irregular verb's forms.
    const searched = w.irregular ? withOtherForms(query, terms) : terms;
    const match = this.matchQuery(opts.scope, searched);
    const cands = new Map<string, Candidate>();
    const get = (row: Row): Candidate => {
      let c = cands.get(row.id);
      if (!c) {
        c = { row, rid: row.rid, text: 0, bm25: 0, date: 0, reply: 0, entity: 0, vector: 0, prf: 0, shape: 0 };
        cands.set(row.id, c);
      }
      return c;
    };
    let best = 0;
    if (match) {
      const text = this.text(match, opts, TEXT_CANDIDATES);
      best = text[0]?.score ?? 0;
      for (const t of text) Object.assign(get(t.row), { text: t.score / best, bm25: t.score });
      const dates = datesIn(query, () => this.years(opts.scope));
      if (dates.length > 0 && w.date !== 0) {
        for (const d of this.onDates(match, dates, named.speakers, w, opts)) {
          const c = get(d.row);
          if (d.score > 0) c.text = Math.max(c.text, d.score / Math.max(best, d.score));
          c.bm25 = Math.max(c.bm25, d.score);
          c.date = Math.max(c.date, d.on);
        }
      }
      // The next two turns of the best hits (their answers) and the turns around them, read once.
      const replySeeds = w.reply !== 0 ? w.replySeeds : 0;
      const aroundSeeds = Math.max(0, w.aroundSeeds);
      const seeds = text.slice(0, Math.max(replySeeds, aroundSeeds)).map((t) => t.row);
      const near = this.turnsAround(seeds, aroundSeeds > 0 ? w.aroundWindow : 0, Math.max(replySeeds > 0 ? 2 : 0, aroundSeeds > 0 ? w.aroundWindow : 0), opts);
      for (const after of seeds.slice(0, replySeeds)) {
        for (const row of near(after, 0, 2)) {
          if (row.speaker === after.speaker && w.replyOtherSpeaker) continue;
          const c = get(row);
          c.reply = Math.max(c.reply, cands.get(after.id)!.text);
        }
      }
      // Document expansion at read time: the turns around the best hits join as candidates;
      // the context signal (text matches among the turns around) then decides where they rank.
      for (const s of seeds.slice(0, aroundSeeds)) for (const row of near(s, w.aroundWindow, w.aroundWindow)) get(row);
    }
    if (match && w.prf !== 0 && best > 0) {
      const expansion = this.feedbackTerms(
        [...cands.values()]
          .filter((c) => c.text > 0)
          .sort((a, b) => b.text - a.text)
          .slice(0, w.prfDocs),
        new Set(terms),
        opts.scope,
      );
      const m2 = expansion.length > 0 ? this.matchQuery(opts.scope, expansion) : null;
      if (m2) {
        const hits = this.text(m2, opts, TEXT_CANDIDATES);
        const top = hits[0]?.score ?? 1;
        for (const h of hits) get(h.row).prf = h.score / top;
      }
    }
    if (w.entity !== 0) for (const e of this.entityHits(q.words, opts)) get(e.row).entity = e.links;
    if (opts.vector) for (const v of this.vectorHits(opts.vector, opts)) get(v.row).vector = v.similarity;
    if (cands.size === 0) return [];
    const shape = w.shape !== 0 ? askedFor(query) : undefined;
    if (shape) for (const c of cands.values()) c.shape = holds(shape, c.row.content) ? 1 : 0;
    return rank([...cands.values()], named.speakers, w)
      .slice(0, limit)
      .map(({ row, score, bm25, vector, lists }) => ({ ...toResult(row, score), match: bm25, similarity: vector, lists }));
  }
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
