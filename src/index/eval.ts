/**
 * Retrieval evaluation (shared/docs/retrieval-eval.md): each conversation is ingested into a
 * fresh index through the live ingest path, then every question is searched with the same
 * function the search_memory tool uses. recall@k looks at the first k distinct message ids of
 * the flattened results. The search sees only the question text and the conversation's scope.
 */
import { readFile } from 'node:fs/promises';
import { MemoryIndex } from './memory-index.js';
import { IndexingService } from './ingest.js';
import { silentLogger } from '../log.js';
import type { SearchResult } from './search.js';

export interface EvalDataset {
  conversations: Array<{
    id: string;
    messages: Array<{ id: string; speaker: string; role: 'user' | 'assistant'; text: string; timestamp: string }>;
    questions: Array<{ question: string; evidence: string[]; category?: unknown }>;
  }>;
}

export type EvalMode = 'hybrid' | 'bm25';

export interface EvalReport {
  questions: number;
  recall: Record<number, number>;
  p50_ms: number;
  p95_ms: number;
  byCategory: Record<string, { questions: number; recall: Record<number, number> }>;
}

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
  if (!Array.isArray(data.conversations)) throw new Error(`${file}: "conversations" must be a list`);
  return data;
}

export function runEval(data: EvalDataset, ks: number[], mode: EvalMode = 'hybrid'): EvalReport {
  const maxK = Math.max(...ks);
  const latencies: number[] = [];
  const sums: Record<number, number> = Object.fromEntries(ks.map((k) => [k, 0]));
  const cats: EvalReport['byCategory'] = {};
  let questions = 0;
  for (const conv of data.conversations) {
    const index = new MemoryIndex(':memory:', silentLogger());
    const ingest = new IndexingService(index);
    const scope = `eval:${conv.id}`;
    for (const m of conv.messages) {
      ingest.ingestMessage({ content: m.text, role: m.role, speaker: m.speaker, sessionId: conv.id, scope, eventTime: new Date(m.timestamp), sourceMessageId: m.id });
    }
    for (const q of conv.questions) {
      const t0 = performance.now();
      const results = mode === 'bm25' ? index.searchBm25(q.question, { scope, limit: maxK }) : index.search(q.question, { scope, limit: maxK });
      latencies.push(performance.now() - t0);
      const ids = flattenIds(results);
      const cat = String(q.category ?? 'none');
      const c = (cats[cat] ??= { questions: 0, recall: Object.fromEntries(ks.map((k) => [k, 0])) });
      c.questions++;
      questions++;
      for (const k of ks) {
        const top = new Set(ids.slice(0, k));
        const r = q.evidence.length ? q.evidence.filter((e) => top.has(e)).length / q.evidence.length : 0;
        sums[k]! += r;
        c.recall[k]! += r;
      }
    }
    index.close();
  }
  for (const c of Object.values(cats)) for (const k of ks) c.recall[k] = c.recall[k]! / c.questions;
  latencies.sort((a, b) => a - b);
  return {
    questions,
    recall: Object.fromEntries(ks.map((k) => [k, questions ? sums[k]! / questions : 0])),
    p50_ms: percentile(latencies, 50),
    p95_ms: percentile(latencies, 95),
    byCategory: cats,
  };
}
