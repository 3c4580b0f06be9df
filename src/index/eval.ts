/**
 * Retrieval evaluation (shared/docs/retrieval-eval.md): each conversation is ingested into a
 * fresh index through the live ingest path, then every question is searched with the same
 * function the search_memory tool uses. recall@k looks at the first k distinct message ids of
 * the flattened results. The search sees only the question text and the conversation's scope.
 *
 * Conversations are split in two halves by a hash of their id (`--split tune|report`): ranking
 * weights are chosen on the tune half and figures are reported on the other, so a signal that
 * only memorizes one half does not survive on the other.
 */
import { readFile } from 'node:fs/promises';
import type { MemoryIndex } from './memory-index.js';
import { SqliteMemoryIndex } from './sqlite-memory-index.js';
import { IndexingService } from './ingest.js';
import { silentLogger } from '../core/log.js';
import type { SearchResult } from './search/result.js';
import { RELEVANT_LIMIT, relevantHits } from './search/relevant.js';
import { AppError } from '../core/errors.js';

export interface EvalMessage {
  id: string;
  speaker: string;
  role: 'user' | 'assistant';
  text: string;
  timestamp: string;
}

export interface EvalQuestion {
  question: string;
  evidence: string[];
  category?: unknown;
}

export interface EvalDataset {
  conversations: Array<{ id: string; messages: EvalMessage[]; questions: EvalQuestion[] }>;
}

export type EvalMode = 'hybrid' | 'bm25';
export type EvalSplit = 'all' | 'tune' | 'report';

export interface RecallFigures {
  questions: number;
  recall: Record<number, number>;
}

export interface EvalReport extends RecallFigures {
  p50_ms: number;
  p95_ms: number;
  byCategory: Record<string, RecallFigures>;
}

/** One conversation ingested into its own fresh index, ready to be asked its questions. */
export interface PreparedConversation {
  id: string;
  index: MemoryIndex;
  scope: string;
  questions: EvalQuestion[];
}

/** How a mode searches: the same calls the tool and `# Relevant Memory` make. */
export type SearchFn = (index: MemoryIndex, query: string, scope: string, limit: number) => SearchResult[];

export const SEARCHES: Record<EvalMode, SearchFn> = {
  hybrid: (index, query, scope, limit) => index.search(query, { scope, limit }),
  bm25: (index, query, scope, limit) => index.searchBm25(query, { scope, limit }),
};

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function flattenIds(results: SearchResult[]): string[] {
  const out: string[] = [];
  for (const r of results) for (const id of r.sourceMessageIds) if (!out.includes(id)) out.push(id);
  return out;
}

export async function loadDataset(file: string): Promise<EvalDataset> {
  const data = JSON.parse(await readFile(file, 'utf8')) as EvalDataset;
  if (!Array.isArray(data.conversations)) throw new AppError('input.invalid', { what: file, problem: '"conversations" must be a list' });
  return data;
}

/** FNV-1a, 32 bits: a stable hash of a conversation id (the same on every machine and run). */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * The half of a dataset's conversations a split stands for. Conversations are ordered by the
 * hash of their id and dealt alternately, so the halves differ in size by at most one and do
 * not follow the order of the file.
 */
export function splitConversations<T extends { id: string }>(conversations: T[], split: EvalSplit): T[] {
  if (split === 'all') return conversations;
  const order = [...conversations].sort((a, b) => fnv1a(a.id) - fnv1a(b.id) || (a.id < b.id ? -1 : 1));
  const tune = new Set(order.filter((_, i) => i % 2 === 0).map((c) => c.id));
  return conversations.filter((c) => tune.has(c.id) === (split === 'tune'));
}

/** Ingests each conversation of the split into a fresh in-memory index (close them after). */
export function prepare(data: EvalDataset, split: EvalSplit = 'all'): PreparedConversation[] {
  return splitConversations(data.conversations, split).map((conv) => {
    const index = new SqliteMemoryIndex(':memory:', silentLogger());
    return { id: conv.id, index, scope: ingestConversation(index, conv), questions: conv.questions };
  });
}

/** Saves a conversation's messages through the live ingest path, in its own scope (returned). */
export function ingestConversation(index: MemoryIndex, conv: EvalDataset['conversations'][number]): string {
  const ingest = new IndexingService(index);
  const scope = `eval:${conv.id}`;
  for (const m of conv.messages) {
    ingest.ingestMessage({
      content: m.text,
      role: m.role,
      speaker: m.speaker,
      sessionId: conv.id,
      scope,
      eventTime: new Date(m.timestamp),
      sourceMessageId: m.id,
    });
  }
  return scope;
}

export function closeAll(prepared: PreparedConversation[]): void {
  for (const p of prepared) p.index.close();
}

/** |evidence ∩ first k ids| / |evidence| for each k. */
export function recallAt(ids: string[], evidence: string[], ks: number[]): number[] {
  return ks.map((k) => {
    if (evidence.length === 0) return 0;
    const top = new Set(ids.slice(0, k));
    return evidence.filter((e) => top.has(e)).length / evidence.length;
  });
}

/** Asks every question of the prepared conversations with one search function. */
export function evaluate(prepared: PreparedConversation[], search: SearchFn, ks: number[]): EvalReport {
  const maxK = Math.max(...ks);
  const latencies: number[] = [];
  const zero = () => Object.fromEntries(ks.map((k) => [k, 0])) as Record<number, number>;
  const total: RecallFigures = { questions: 0, recall: zero() };
  const cats: Record<string, RecallFigures> = {};
  for (const conv of prepared) {
    for (const q of conv.questions) {
      const t0 = performance.now();
      const results = search(conv.index, q.question, conv.scope, maxK);
      latencies.push(performance.now() - t0);
      const r = recallAt(flattenIds(results), q.evidence, ks);
      const c = (cats[String(q.category ?? 'none')] ??= { questions: 0, recall: zero() });
      for (const f of [c, total]) {
        f.questions++;
        ks.forEach((k, i) => (f.recall[k]! += r[i]!));
      }
    }
  }
  for (const f of [total, ...Object.values(cats)]) for (const k of ks) f.recall[k] = f.questions ? f.recall[k]! / f.questions : 0;
  latencies.sort((a, b) => a - b);
  return { ...total, p50_ms: percentile(latencies, 50), p95_ms: percentile(latencies, 95), byCategory: cats };
}

export function runEval(data: EvalDataset, ks: number[], mode: EvalMode = 'hybrid', split: EvalSplit = 'all'): EvalReport {
  const prepared = prepare(data, split);
  try {
    return evaluate(prepared, SEARCHES[mode], ks);
  } finally {
    closeAll(prepared);
  }
}

/** Messages with nothing to remember: `# Relevant Memory` should inject nothing for them. */
export const SMALL_TALK = [
  'hi',
  'hey, how are you?',
  'good morning!',
  'thanks!',
  'ok cool',
  'lol',
  "what's up?",
  'sounds good to me',
  'see you tomorrow',
  'how was your day?',
  'good night',
  'yes, sure',
];

export interface RelevantPrecision {
  /** Lines injected over all questions, and how many of them are evidence. */
  lines: number;
  evidence: number;
  /** Questions for which nothing was injected. */
  empty: number;
  /** Lines injected for the small-talk messages, over all conversations. */
  smallTalkLines: number;
}

/**
 * Precision of `# Relevant Memory` on the questions: the share of injected lines that are
 * evidence, with the relevance bar (`minMatch`) or without it (0: the top five as they come).
 */
export function relevantPrecision(prepared: PreparedConversation[], minMatch?: number): RelevantPrecision {
  const out: RelevantPrecision = { lines: 0, evidence: 0, empty: 0, smallTalkLines: 0 };
  for (const conv of prepared) {
    for (const q of conv.questions) {
      const ids = flattenIds(relevantHits(conv.index, q.question, { scope: conv.scope }, minMatch)).slice(0, RELEVANT_LIMIT);
      out.lines += ids.length;
      out.evidence += ids.filter((id) => q.evidence.includes(id)).length;
      if (ids.length === 0) out.empty++;
    }
    for (const m of SMALL_TALK) out.smallTalkLines += relevantHits(conv.index, m, { scope: conv.scope }, minMatch).length;
  }
  return out;
}

export interface CompareReport extends Record<EvalMode, EvalReport> {
  conversations: number;
  /** Absent when not asked for (`relevant: false`). */
  relevant?: { withoutBar: RelevantPrecision; withBar: RelevantPrecision };
}

/** Baseline and default search over the same ingested conversations (one ingest, one run). */
export function runCompare(data: EvalDataset, ks: number[], split: EvalSplit = 'all', opts: { relevant?: boolean } = {}): CompareReport {
  const prepared = prepare(data, split);
  try {
    return compareOn(prepared, ks, opts);
  } finally {
    closeAll(prepared);
  }
}

/** Baseline and default search over conversations already ingested (also in PostgreSQL: src/index/pg/eval-pg.ts). */
export function compareOn(prepared: PreparedConversation[], ks: number[], opts: { relevant?: boolean } = {}): CompareReport {
  return {
    conversations: prepared.length,
    bm25: evaluate(prepared, SEARCHES.bm25, ks),
    hybrid: evaluate(prepared, SEARCHES.hybrid, ks),
    ...(opts.relevant === false ? {} : { relevant: { withoutBar: relevantPrecision(prepared, 0), withBar: relevantPrecision(prepared) } }),
  };
}
