/**
 * PgUsageStore, the usage store (usage.ts) in PostgreSQL: `usage_daily` and `usage_models`
 * (migrations/pg/051_usage.sql), the same rows as usage.db.
 *
 * `record` runs for every LLM call and nobody waits on it, so it adds the call to sums held in
 * memory and returns; the sums are written in the background, one transaction for all that
 * gathered meanwhile (`INSERT … ON CONFLICT DO UPDATE` adding to the rows, so two processes
 * adding to one row lose none of each other's calls). A write that fails puts its sums back and
 * is tried again with back-off; `flush` (and `close`, which flushes) resolves once every call
 * recorded before it is committed, and fails only when the database stays away past its wait —
 * a clean stop loses nothing; a kill loses the calls of the last moments, at most those not yet
 * written (counts, not what anyone was told). Every read flushes first, so a process reads its
 * own calls at once, and every other process's once that one has written them: the budget
 * (budget.ts) sums every process's calls of the day.
 *
 * Text sorts as bytes (`COLLATE "C"`), as SQLite's does: both stores list rows in one order.
 */
import { backoffDelay } from '../../core/retry.js';
import type { Logger } from '../../core/log.js';
import { groupOf } from '../../core/group.js';
import { localDate } from '../../memory/notes.js';
import type { Database, Sql } from '../../storage/pg/database.js';
import type { Portable } from '../../storage/portable.js';
import type { TokenUsage, UsageAccount } from '../../llm/accounting.js';
import { insertRows } from '../../storage/pg/insert.js';
import {
  callFigures,
  sumUsage,
  USAGE_COLUMNS,
  usageValues,
  type UsageItem,
  type UsageModelRow,
  type UsageRow,
  type UsageStore,
  type UsageTotals,
} from './usage.js';

/** How a row is read: the same names as usage.db's store gives. */
const DAILY_READ = `day, chat, kind, calls, prompt_tokens AS "promptTokens", cached_tokens AS "cachedTokens", completion_tokens AS "completionTokens",
  audio_seconds AS "audioSeconds", estimated_calls AS "estimatedCalls", estimated_tokens AS "estimatedTokens"`;
const MODEL_READ = `day, chat, kind, model, calls, prompt_tokens AS "promptTokens", cached_tokens AS "cachedTokens", completion_tokens AS "completionTokens"`;
/** The figures of a row read (bigint and numeric come as text). */
const NUMBERS = ['calls', 'promptTokens', 'cachedTokens', 'completionTokens', 'audioSeconds', 'estimatedCalls', 'estimatedTokens'] as const;
/** Back-off of a background write that failed: 1 s doubling to a minute. */
const RETRY_BASE_MS = 1000;
const RETRY_CAP_MS = 60_000;

/** Sums not yet written, per row: usage_daily's columns after the key, or usage_models'. */
type Sums = Map<string, { key: string[]; figures: number[] }>;

function addTo(sums: Sums, key: string[], figures: number[]): void {
  const k = JSON.stringify(key);
  const had = sums.get(k);
  if (!had) sums.set(k, { key, figures: [...figures] });
  else figures.forEach((f, i) => (had.figures[i]! += f));
}

function numbers<R extends Record<string, unknown>>(row: R): R {
  const out: Record<string, unknown> = { ...row };
  for (const n of NUMBERS) if (n in out) out[n] = Number(out[n]);
  return out as R;
}

export class PgUsageStore implements UsageStore, Portable<UsageItem> {
  readonly portableName = 'token usage';
  private daily: Sums = new Map();
  private models: Sums = new Map();
  /** The newest write; writes run one after another. */
  private writing: Promise<void> = Promise.resolve();
  /** A background write is queued behind `writing` and will take what is recorded until it starts. */
  private queued = false;
  /** Background writes that failed in a row (the back-off's attempt). */
  private failures = 0;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database,
    private readonly timezone: string,
    private readonly log: Logger,
  ) {}

  dayOf(at: Date = new Date()): string {
    return localDate(at, this.timezone);
  }

  record(account: UsageAccount, usage: TokenUsage, at: Date = new Date(), model?: string): void {
    const f = callFigures(usage);
    const day = this.dayOf(at);
    addTo(this.daily, [day, account.chat, account.kind], [1, f.prompt, f.cached, f.completion, f.seconds, f.estCalls, f.estTokens]);
    if (model) addTo(this.models, [day, account.chat, account.kind, model], [1, f.prompt, f.cached, f.completion]);
    if (this.queued) return;
    this.queued = true;
    this.writing = this.writing.then(() => this.write(false));
  }

  flush(): Promise<void> {
    const run = this.writing.then(() => this.write(true));
    this.writing = run.catch(() => undefined);
    return run;
  }

  /**
   * Writes the sums gathered so far in one transaction. Failed, they are put back (added to what
   * came meanwhile): `strict` (a flush) throws, a background write logs and tries again later.
   */
  private async write(strict: boolean): Promise<void> {
    this.queued = false;
    clearTimeout(this.retry);
    const daily = this.daily;
    const models = this.models;
    if (daily.size === 0 && models.size === 0) return;
    this.daily = new Map();
    this.models = new Map();
    try {
      await this.db.tx(async (sql) => {
        await upsert(sql, 'usage_daily', USAGE_COLUMNS.daily, 3, daily);
        await upsert(sql, 'usage_models', USAGE_COLUMNS.models, 4, models);
      });
      if (this.failures > 0) this.log.info({ calls: count(daily) }, 'token counts written again after a failure');
      this.failures = 0;
    } catch (err) {
      for (const { key, figures } of daily.values()) addTo(this.daily, key, figures);
      for (const { key, figures } of models.values()) addTo(this.models, key, figures);
      if (strict) throw err;
      this.failures++;
      const wait = backoffDelay(this.failures, RETRY_BASE_MS, RETRY_CAP_MS, Math.random);
      this.log.warn({ err, calls: count(this.daily), retryInMs: wait }, 'token counts could not be written; kept, and tried again');
      this.retry = setTimeout(() => {
        if (this.queued) return;
        this.queued = true;
        this.writing = this.writing.then(() => this.write(false));
      }, wait);
      this.retry.unref();
    }
  }

  /** Waits for this process's calls to be written, so that reads see them; a read of a database that is away fails on its own. */
  private async settled(): Promise<void> {
    await this.flush().catch(() => undefined);
  }

  async byModel(chat: string, day: string = this.dayOf()): Promise<Array<UsageTotals & { model: string }>> {
    await this.settled();
    const { rows } = await this.db.query<UsageModelRow & Record<string, unknown>>(
      `SELECT model, sum(calls) AS calls, sum(prompt_tokens) AS "promptTokens", sum(cached_tokens) AS "cachedTokens", sum(completion_tokens) AS "completionTokens"
       FROM usage_models WHERE day = $1 AND chat = $2 GROUP BY model ORDER BY model COLLATE "C"`,
      [day, chat],
    );
    return rows
      .map(numbers)
      .map((r) => ({ ...sumUsage([r]), model: r.model }))
      .sort((a, b) => b.total - a.total);
  }

  async rows(opts: { since?: string; until?: string; chat?: string } = {}): Promise<UsageRow[]> {
    await this.settled();
    const { rows } = await this.db.query<UsageRow & Record<string, unknown>>(
      `SELECT ${DAILY_READ} FROM usage_daily
       WHERE ($1::text IS NULL OR day >= $1) AND ($2::text IS NULL OR day <= $2) AND ($3::text IS NULL OR chat = $3)
       ORDER BY day COLLATE "C", chat COLLATE "C", kind COLLATE "C"`,
      [opts.since ?? null, opts.until ?? null, opts.chat ?? null],
    );
    return rows.map(numbers);
  }

  async day(chat: string, day: string = this.dayOf()): Promise<{ all: UsageTotals; answers: UsageTotals; background: UsageTotals }> {
    const rows = await this.rows({ since: day, until: day, chat });
    return { all: sumUsage(rows), answers: sumUsage(rows.filter((r) => r.kind === 'answer')), background: sumUsage(rows.filter((r) => r.kind !== 'answer')) };
  }

  /** The group's and its topics' rows of the day (their keys start with the group's and `:`); groupOf decides. */
  async groupDay(chat: string, day: string = this.dayOf()): Promise<UsageTotals> {
    await this.settled();
    const group = groupOf(chat);
    const { rows } = await this.db.query<UsageRow & Record<string, unknown>>(
      `SELECT ${DAILY_READ} FROM usage_daily WHERE day = $1 AND (chat = $2 OR starts_with(chat, $3))`,
      [day, group, `${group}:`],
    );
    return sumUsage(rows.map(numbers).filter((r) => groupOf(r.chat) === group));
  }

  async chats(): Promise<string[]> {
    await this.settled();
    const { rows } = await this.db.query<{ chat: string }>('SELECT chat FROM usage_daily UNION SELECT chat FROM usage_models');
    return rows.map((r) => r.chat);
  }

  /** Purge: the chat's rows of both tables, in one transaction, after this process's calls are written. */
  async deleteChat(chat: string): Promise<number> {
    await this.flush();
    return this.db.tx(async (sql) => {
      const a = await sql.query('DELETE FROM usage_daily WHERE chat = $1', [chat]);
      const b = await sql.query('DELETE FROM usage_models WHERE chat = $1', [chat]);
      return a.rowCount + b.rowCount;
    });
  }

  /** Writes what is recorded; the Database is the caller's (several stores share it). */
  async close(): Promise<void> {
    clearTimeout(this.retry);
    await this.flush();
  }

  async *dump(): AsyncIterable<UsageItem> {
    await this.flush();
    const [daily, models] = await this.db.tx(
      async (sql) => [
        await sql.query<UsageRow & Record<string, unknown>>(
          `SELECT ${DAILY_READ} FROM usage_daily ORDER BY day COLLATE "C", chat COLLATE "C", kind COLLATE "C"`,
        ),
        await sql.query<UsageModelRow & Record<string, unknown>>(
          `SELECT ${MODEL_READ} FROM usage_models ORDER BY day COLLATE "C", chat COLLATE "C", kind COLLATE "C", model COLLATE "C"`,
        ),
      ],
      { isolation: 'repeatable read' },
    );
    for (const row of daily.rows) yield { table: 'daily', row: numbers(row) };
    for (const row of models.rows) yield { table: 'models', row: numbers(row) };
  }

  async load(items: AsyncIterable<UsageItem>): Promise<number> {
    const rows = { daily: [] as unknown[][], models: [] as unknown[][] };
    for await (const i of items) rows[i.table].push(usageValues(i));
    await this.db.tx(async (sql) => {
      await insertRows(sql, 'usage_daily', USAGE_COLUMNS.daily, rows.daily);
      await insertRows(sql, 'usage_models', USAGE_COLUMNS.models, rows.models);
    });
    return rows.daily.length + rows.models.length;
  }

  async isEmpty(): Promise<boolean> {
    await this.settled();
    const { rows } = await this.db.query('SELECT 1 FROM usage_daily UNION ALL SELECT 1 FROM usage_models LIMIT 1');
    return rows.length === 0;
  }

  async clear(): Promise<void> {
    await this.flush();
    await this.db.tx(async (sql) => {
      await sql.query('DELETE FROM usage_daily');
      await sql.query('DELETE FROM usage_models');
    });
  }
}

/** Calls held in these sums (the first figure of each). */
const count = (sums: Sums): number => [...sums.values()].reduce((n, s) => n + s.figures[0]!, 0);

/** Adds the sums to their rows: inserted, or added to the row there (`keyWidth`: the key's columns, first). */
async function upsert(sql: Sql, table: string, columns: string, keyWidth: number, sums: Sums): Promise<void> {
  if (sums.size === 0) return;
  const names = columns.split(',').map((c) => c.trim());
  const key = names.slice(0, keyWidth).join(', ');
  const add = names
    .slice(keyWidth)
    .map((c) => `${c} = ${table}.${c} + excluded.${c}`)
    .join(', ');
  const rows = [...sums.values()].map((s) => [...s.key, ...s.figures]);
  await insertRows(sql, table, columns, rows, `ON CONFLICT (${key}) DO UPDATE SET ${add}`);
}
