/**
 * What a search is asked and what it answers, in the shape every reader of the index uses
 * (the prompt's Relevant Memory, the tools, the eval), and the one place a row becomes a result.
 */
import type { MemoryKind, MemoryRow } from '../store/repository.js';
import type { RankWeights } from './rank.js';

export interface SearchOptions {
  scope: string;
  kinds?: MemoryKind[];
  excludeSessionId?: string | undefined;
  limit?: number;
  /** Query embedding, when vector search is on. */
  vector?: Float32Array | undefined;
  /** Ranking weights (the eval's tuning tries others; everything else uses the defaults). */
  weights?: RankWeights;
  /** Retired facts to search as well (a question about before: search.ts sets it). */
  superseded?: string[];
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
  /**
   * The hit states a value a correction replaced (superseded.ts): the fact that holds now and
   * when the correction was made. Such a hit is shown with that value and ranked below it.
   */
  correctedBy?: { id: string; content: string; date: string };
}

/** The columns of `memories` (alias m) a result is made from. */
export const ROW_COLUMNS =
  'm.id, m.kind, m.content, m.event_time, m.speaker, m.source_role, m.session_id, m.source_message_id, m.source_ids, m.confidence, m.seq';

/**
 * The WHERE terms every candidate list adds (after its own): this scope, live (not superseded,
 * unless `superseded` names it),
 * of the kinds asked, and outside the conversation excluded.
 */
export function scopeFilter(opts: SearchOptions, alias = 'm'): { sql: string; params: unknown[] } {
  const kinds = opts.kinds?.length ? opts.kinds : ['episode', 'fact', 'reflection'];
  const old = opts.superseded ?? [];
  const live = old.length > 0 ? `(${alias}.valid_until IS NULL OR ${alias}.id IN (${old.map(() => '?').join(',')}))` : `${alias}.valid_until IS NULL`;
  let sql = ` AND ${alias}.scope = ? AND ${live} AND ${alias}.kind IN (${kinds.map(() => '?').join(',')})`;
  const params: unknown[] = [opts.scope, ...old, ...kinds];
  if (opts.excludeSessionId) {
    sql += ` AND (${alias}.session_id IS NULL OR ${alias}.session_id != ?)`;
    params.push(opts.excludeSessionId);
  }
  return { sql, params };
}

/** A row with its rowid, which the FTS tables and the candidate lists join on. */
export type Row = MemoryRow & { rid: number };

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
