/**
 * SqliteUsageStore, the usage store (usage.ts) in `workspace/usage.db`: a row per day × chat ×
 * kind in `usage_daily`, and beside it `usage_models`, the same sums per model that answered (a
 * chat's /model choice, or an LLM_FALLBACK model that took over), so a bill can be read per
 * model. Its own table: usage_daily's key stays as it was, and a file from before simply gains
 * the table. Its own small file rather than memory.db: accounting and budgets must keep working
 * when the index is locked or off.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { localDate } from '../../memory/notes.js';
import { silentLogger, type Logger } from '../../core/log.js';
import { openSqlite, quickCheck } from '../../storage/sqlite.js';
import { WORKSPACE_FILES } from '../../storage/workspace-files.js';
import { groupOf } from '../../core/group.js';
import type { TokenUsage, UsageAccount } from '../../llm/accounting.js';
import type { Portable } from '../../storage/portable.js';
import {
  callFigures,
  sumUsage as totals,
  USAGE_COLUMNS,
  usageValues,
  type UsageItem,
  type UsageModelRow,
  type UsageRow,
  type UsageStore,
  type UsageTotals,
} from './usage.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS usage_daily (
  day               TEXT NOT NULL,   -- YYYY-MM-DD in TZ
  chat              TEXT NOT NULL,   -- channel:chatId, a memory scope, or '*'
  kind              TEXT NOT NULL,   -- answer | summary | consolidation | facts | reflection | embeddings
  calls             INTEGER NOT NULL DEFAULT 0,
  prompt_tokens     INTEGER NOT NULL DEFAULT 0,
  cached_tokens     INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  audio_seconds     REAL NOT NULL DEFAULT 0,   -- transcription: seconds of audio (billed by duration)
  estimated_calls   INTEGER NOT NULL DEFAULT 0, -- calls of the row counted by the daemon: the server reported no usage
  estimated_tokens  INTEGER NOT NULL DEFAULT 0, -- their prompt + completion tokens (part of the sums above)
  PRIMARY KEY (day, chat, kind)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idx_usage_chat_day ON usage_daily(chat, day);
CREATE TABLE IF NOT EXISTS usage_models (
  day               TEXT NOT NULL,
  chat              TEXT NOT NULL,
  kind              TEXT NOT NULL,
  model             TEXT NOT NULL,   -- the model that answered, as configured
  calls             INTEGER NOT NULL DEFAULT 0,
  prompt_tokens     INTEGER NOT NULL DEFAULT 0,
  cached_tokens     INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (day, chat, kind, model)
) WITHOUT ROWID;
`;

/** Columns usage_daily gained after its first version, added to an older file at open. */
const ADDED_COLUMNS = [
  ['audio_seconds', 'REAL'],
  ['estimated_calls', 'INTEGER'],
  ['estimated_tokens', 'INTEGER'],
] as const;

export class SqliteUsageStore implements UsageStore, Portable<UsageItem> {
  readonly portableName = 'token usage';

  /** The workspace's usage.db, made when missing (the daemon; purge with `existing`). */
  static inWorkspace(workspaceDir: string, timezone: string, opts: { log?: Logger } = {}): SqliteUsageStore {
    return new SqliteUsageStore(SqliteUsageStore.fileIn(workspaceDir), timezone, opts);
  }

  /** The workspace's usage.db when there is one (nothing is made otherwise): purge, or read-only for the report. */
  static existing(workspaceDir: string, timezone: string, opts: { readonly?: boolean; log?: Logger } = {}): SqliteUsageStore | undefined {
    const file = SqliteUsageStore.fileIn(workspaceDir);
    return existsSync(file) ? new SqliteUsageStore(file, timezone, opts) : undefined;
  }

  /** Where the workspace keeps it (the report names it when there is none yet). */
  static fileIn(workspaceDir: string): string {
    return path.join(workspaceDir, WORKSPACE_FILES.usage);
  }

  private readonly db: Database.Database;
  private readonly add: Database.Statement;
  /** A group's rows of a day (prepared at first use: asked before every message of a budgeted chat). */
  private groupRows: Database.Statement | undefined;
  private readonly addModel: Database.Statement;
  /** Both rows of one call in one transaction (wrapped once: `record` runs for every LLM call). */
  private readonly addBoth: (day: string, chat: string, kind: string, figures: number[], extra: number[], model: string | undefined) => void;
  /** usage_daily's columns (asked once, see `added`). */
  private columns: Set<string> | undefined;
  /** Where a damaged usage.db went when this one started empty (its counts start again at 0). */
  readonly setAside: string | undefined;

  constructor(
    file: string,
    private readonly timezone: string,
    opts: { readonly?: boolean; log?: Logger } = {},
  ) {
    if (opts.readonly) this.db = new Database(file, { timeout: 2000, readonly: true, fileMustExist: true });
    else {
      const opened = openSqlite(file, {
        busyTimeoutMs: 2000,
        synchronous: 'NORMAL',
        setup: (db) => {
          db.exec(SCHEMA);
          // A usage.db from before transcriptions (or estimates) were recorded: the columns are added, rows keep 0.
          const columns = db.prepare('PRAGMA table_info(usage_daily)').all() as Array<{ name: string }>;
          for (const [name, type] of ADDED_COLUMNS)
            if (!columns.some((c) => c.name === name)) db.exec(`ALTER TABLE usage_daily ADD COLUMN ${name} ${type} NOT NULL DEFAULT 0`);
          quickCheck(db, file);
        },
        log: opts.log ?? silentLogger(),
      });
      this.db = opened.db;
      this.setAside = opened.setAside;
    }
    this.add = opts.readonly
      ? (undefined as unknown as Database.Statement)
      : this.db.prepare(
          `INSERT INTO usage_daily (day, chat, kind, calls, prompt_tokens, cached_tokens, completion_tokens, audio_seconds, estimated_calls, estimated_tokens)
             VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (day, chat, kind) DO UPDATE SET calls = calls + 1, prompt_tokens = prompt_tokens + excluded.prompt_tokens,
             cached_tokens = cached_tokens + excluded.cached_tokens, completion_tokens = completion_tokens + excluded.completion_tokens,
             audio_seconds = audio_seconds + excluded.audio_seconds, estimated_calls = estimated_calls + excluded.estimated_calls,
             estimated_tokens = estimated_tokens + excluded.estimated_tokens`,
        );
    this.addModel = opts.readonly
      ? (undefined as unknown as Database.Statement)
      : this.db.prepare(
          `INSERT INTO usage_models (day, chat, kind, model, calls, prompt_tokens, cached_tokens, completion_tokens) VALUES (?, ?, ?, ?, 1, ?, ?, ?)
           ON CONFLICT (day, chat, kind, model) DO UPDATE SET calls = calls + 1, prompt_tokens = prompt_tokens + excluded.prompt_tokens,
             cached_tokens = cached_tokens + excluded.cached_tokens, completion_tokens = completion_tokens + excluded.completion_tokens`,
        );
    this.addBoth = this.db.transaction((day: string, chat: string, kind: string, figures: number[], extra: number[], model: string | undefined) => {
      this.add.run(day, chat, kind, ...figures, ...extra);
      if (model) this.addModel.run(day, chat, kind, model, ...figures);
    });
  }

  /**
   * A column of ADDED_COLUMNS as a query reads it: 0 in an older file opened read-only (the
   * report, `npm run memory -- usage`), which is not migrated until the daemon opens it.
   */
  private added(column: (typeof ADDED_COLUMNS)[number][0]): string {
    this.columns ??= new Set((this.db.prepare('PRAGMA table_info(usage_daily)').all() as Array<{ name: string }>).map((c) => c.name));
    return this.columns.has(column) ? column : '0';
  }

  /** The day (YYYY-MM-DD, in TZ) a moment belongs to. */
  dayOf(at: Date = new Date()): string {
    return localDate(at, this.timezone);
  }

  /** `model`: the model that answered; the call is then also added to its row of `usage_models`. */
  record(account: UsageAccount, usage: TokenUsage, at: Date = new Date(), model?: string): void {
    const f = callFigures(usage);
    this.addBoth(this.dayOf(at), account.chat, account.kind, [f.prompt, f.cached, f.completion], [f.seconds, f.estCalls, f.estTokens], model);
  }

  /** Written already: `record` is one synchronous transaction. */
  async flush(): Promise<void> {}

  /** One chat's calls and tokens on one day (default today) per model that answered, most tokens first. */
  async byModel(chat: string, day: string = this.dayOf()): Promise<Array<UsageTotals & { model: string }>> {
    const rows = this.db
      .prepare(
        `SELECT model, SUM(calls) AS calls, SUM(prompt_tokens) AS promptTokens, SUM(cached_tokens) AS cachedTokens, SUM(completion_tokens) AS completionTokens
         FROM usage_models WHERE day = ? AND chat = ? GROUP BY model`,
      )
      .all(day, chat) as Array<TokenUsage & { model: string; calls: number }>;
    return rows.map((r) => ({ ...r, total: r.promptTokens + r.completionTokens })).sort((a, b) => b.total - a.total);
  }

  /**
   * Rows per day × chat × kind, days from `since` to `until` (inclusive, YYYY-MM-DD), oldest day
   * first — the query a chart of tokens per day reads.
   */
  async rows(opts: { since?: string; until?: string; chat?: string } = {}): Promise<UsageRow[]> {
    const where: string[] = [];
    const params: string[] = [];
    if (opts.since) where.push('day >= ?'), params.push(opts.since);
    if (opts.until) where.push('day <= ?'), params.push(opts.until);
    if (opts.chat) where.push('chat = ?'), params.push(opts.chat);
    return this.db
      .prepare(
        `SELECT day, chat, kind, calls, prompt_tokens AS promptTokens, cached_tokens AS cachedTokens, completion_tokens AS completionTokens,
           ${this.added('audio_seconds')} AS audioSeconds, ${this.added('estimated_calls')} AS estimatedCalls, ${this.added('estimated_tokens')} AS estimatedTokens
         FROM usage_daily ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY day, chat, kind`,
      )
      .all(...params) as UsageRow[];
  }

  /** One chat's totals for one day (default today): all calls, answers only, background only. */
  async day(chat: string, day: string = this.dayOf()): Promise<{ all: UsageTotals; answers: UsageTotals; background: UsageTotals }> {
    const rows = await this.rows({ since: day, until: day, chat });
    return { all: totals(rows), answers: totals(rows.filter((r) => r.kind === 'answer')), background: totals(rows.filter((r) => r.kind !== 'answer')) };
  }

  /**
   * What a chat's group used on one day (default today), all kinds: the chat itself, or for a
   * forum topic its whole group — the General topic and every topic together (core/group.ts).
   */
  async groupDay(chat: string, day: string = this.dayOf()): Promise<UsageTotals> {
    const group = groupOf(chat);
    const prefix = `${group}:`;
    // The day narrows by the primary key; the prefix narrows to the group's topics, and groupOf decides.
    this.groupRows ??= this.db.prepare(
      `SELECT chat, calls, prompt_tokens AS promptTokens, cached_tokens AS cachedTokens, completion_tokens AS completionTokens
       FROM usage_daily WHERE day = ? AND (chat = ? OR substr(chat, 1, ?) = ?)`,
    );
    const rows = this.groupRows.all(day, group, prefix.length, prefix) as Array<UsageRow>;
    return totals(rows.filter((r) => groupOf(r.chat) === group));
  }

  /** Every chat with rows (purge finds a group's topics among them). */
  async chats(): Promise<string[]> {
    return (this.db.prepare('SELECT chat FROM usage_daily UNION SELECT chat FROM usage_models').all() as Array<{ chat: string }>).map((r) => r.chat);
  }

  /** Purge: every row of one chat, overwritten on disk (secure_delete) and the log truncated. */
  async deleteChat(chat: string): Promise<number> {
    this.db.pragma('secure_delete = ON');
    const n =
      this.db.prepare('DELETE FROM usage_daily WHERE chat = ?').run(chat).changes +
      this.db.prepare('DELETE FROM usage_models WHERE chat = ?').run(chat).changes;
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    return n;
  }

  /** Every row of both tables, as `rows` reads them. */
  async *dump(): AsyncIterable<UsageItem> {
    for (const row of await this.rows()) yield { table: 'daily', row };
    const models = this.db
      .prepare(
        `SELECT day, chat, kind, model, calls, prompt_tokens AS promptTokens, cached_tokens AS cachedTokens, completion_tokens AS completionTokens
         FROM usage_models ORDER BY day, chat, kind, model`,
      )
      .all() as UsageModelRow[];
    for (const row of models) yield { table: 'models', row };
  }

  async load(items: AsyncIterable<UsageItem>): Promise<number> {
    const all: UsageItem[] = [];
    for await (const i of items) all.push(i);
    const insert = {
      daily: this.db.prepare(`INSERT INTO usage_daily (${USAGE_COLUMNS.daily}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      models: this.db.prepare(`INSERT INTO usage_models (${USAGE_COLUMNS.models}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
    };
    this.db.transaction(() => {
      for (const i of all) insert[i.table].run(...usageValues(i));
    })();
    return all.length;
  }

  async isEmpty(): Promise<boolean> {
    return !this.db.prepare('SELECT 1 FROM usage_daily UNION ALL SELECT 1 FROM usage_models LIMIT 1').get();
  }

  async clear(): Promise<void> {
    this.db.pragma('secure_delete = ON');
    this.db.exec('DELETE FROM usage_daily; DELETE FROM usage_models;');
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
