/**
 * The usage store: tokens per chat per day — every LLM response's `usage` (prompt tokens, the
 * cached part of them when the server reports it, completion tokens) added to one row per day ×
 * chat × kind, and the same sums per model that answered. Answers (`answer`) are kept apart from
 * background calls (`summary`, `consolidation`, `facts`, `reflection`, `embeddings`); a voice
 * note's speech to text is `transcription`, with the seconds of audio beside its tokens.
 * Embeddings are batched across chats, so they are recorded under the chat `*`. Days are
 * calendar dates in the configured TZ, like the daily notes.
 *
 * A call that ended without the server's `usage` (stopped, timed out, cut off; a server that
 * never reports it) is recorded from the daemon's own count (llm/accounting.ts estimateUsage)
 * in the same row, so the budget sees it; `estimatedCalls` and `estimatedTokens` say how much
 * of the row is such an estimate.
 *
 * Callers — the LLM client's usage sink, the daily budget (budget.ts), /status, the memory
 * page's chart, `npm run memory -- usage` and purge — see only this interface; it is kept in its
 * own SQLite file (sqlite-usage.ts), or in PostgreSQL with DATABASE_URL (pg-usage.ts). Reads
 * answer a promise (a database elsewhere cannot answer at once). `record` does not: it runs for
 * every LLM call and nobody waits on it — a store that writes later holds the call until
 * `flush`, which `close` does, and each read waits for the calls recorded before it, so a
 * process always reads its own counts. What any implementation must do:
 * test/features/usage/usage.contract.ts.
 */
import type { TokenUsage, UsageAccount, UsageKind } from '../../llm/accounting.js';

/** One row: one chat, one day, one kind. */
export interface UsageRow extends TokenUsage {
  day: string;
  chat: string;
  kind: UsageKind;
  calls: number;
  /** Of `calls`, those the server reported no usage for, and their tokens (counted by the daemon). */
  estimatedCalls: number;
  estimatedTokens: number;
}

export interface UsageTotals extends TokenUsage {
  calls: number;
  /** prompt + completion */
  total: number;
}

export interface UsageStore {
  /** The day (YYYY-MM-DD, in TZ) a moment belongs to. */
  dayOf(at?: Date): string;
  /** Adds one call to its day's row (`model`: the model that answered; the call then also counts for it). */
  record(account: UsageAccount, usage: TokenUsage, at?: Date, model?: string): void;
  /** Resolves once every call recorded before it is stored (kept through a kill). */
  flush(): Promise<void>;
  /** One chat's calls and tokens on one day (default today) per model that answered, most tokens first. */
  byModel(chat: string, day?: string): Promise<Array<UsageTotals & { model: string }>>;
  /** Rows per day × chat × kind, days from `since` to `until` (inclusive, YYYY-MM-DD), oldest day first. */
  rows(opts?: { since?: string; until?: string; chat?: string }): Promise<UsageRow[]>;
  /** One chat's totals for one day (default today): all calls, answers only, background only. */
  day(chat: string, day?: string): Promise<{ all: UsageTotals; answers: UsageTotals; background: UsageTotals }>;
  /**
   * What a chat's group used on one day (default today), all kinds: the chat itself, or for a
   * forum topic its whole group — the General topic and every topic together (core/group.ts).
   */
  groupDay(chat: string, day?: string): Promise<UsageTotals>;
  /** Every chat with rows (purge finds a group's topics among them). */
  chats(): Promise<string[]>;
  /** Purge: every row of one chat, no byte left; returns how many. */
  deleteChat(chat: string): Promise<number>;
  /** Flushes, then lets go of the store. */
  close(): Promise<void>;
}

/** One row of the per-model sums. */
export interface UsageModelRow {
  day: string;
  chat: string;
  kind: UsageKind;
  model: string;
  calls: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
}

/** One item of the counts as they move between the embedded files and PostgreSQL (storage/portable.ts): a row of either table. */
export type UsageItem = { table: 'daily'; row: UsageRow } | { table: 'models'; row: UsageModelRow };

/** Both SQL stores' columns (usage.db, and PostgreSQL's tables of the same names), in the order `usageValues` gives an item's values. */
export const USAGE_COLUMNS = {
  daily: 'day, chat, kind, calls, prompt_tokens, cached_tokens, completion_tokens, audio_seconds, estimated_calls, estimated_tokens',
  models: 'day, chat, kind, model, calls, prompt_tokens, cached_tokens, completion_tokens',
} as const;

/** An item's values for its table's INSERT (`load`). */
export function usageValues(item: UsageItem): unknown[] {
  const r = item.row;
  const figures = [r.calls, r.promptTokens, r.cachedTokens, r.completionTokens];
  return item.table === 'daily'
    ? [r.day, r.chat, r.kind, ...figures, item.row.audioSeconds ?? 0, item.row.estimatedCalls, item.row.estimatedTokens]
    : [r.day, r.chat, r.kind, item.row.model, ...figures];
}

/** The whole non-negative count a reported figure stands for (a negative, fractional or missing one is no count). */
export const wholeCount = (x: number): number => (Number.isFinite(x) && x > 0 ? Math.round(x) : 0);

/** What one call adds to its rows: tokens, audio seconds, and whether (and how much) it was the daemon's estimate. */
export function callFigures(usage: TokenUsage): { prompt: number; cached: number; completion: number; seconds: number; estCalls: number; estTokens: number } {
  const prompt = wholeCount(usage.promptTokens);
  const cached = wholeCount(usage.cachedTokens);
  const completion = wholeCount(usage.completionTokens);
  const seconds = usage.audioSeconds !== undefined && Number.isFinite(usage.audioSeconds) && usage.audioSeconds > 0 ? usage.audioSeconds : 0;
  return { prompt, cached, completion, seconds, estCalls: usage.estimated ? 1 : 0, estTokens: usage.estimated ? prompt + completion : 0 };
}

/** Sums rows (or any figures with calls) into totals. */
export function sumUsage(rows: ReadonlyArray<TokenUsage & { calls: number }>): UsageTotals {
  const t: UsageTotals = { calls: 0, promptTokens: 0, cachedTokens: 0, completionTokens: 0, total: 0 };
  for (const r of rows) {
    t.calls += r.calls;
    t.promptTokens += r.promptTokens;
    t.cachedTokens += r.cachedTokens;
    t.completionTokens += r.completionTokens;
  }
  t.total = t.promptTokens + t.completionTokens;
  return t;
}
