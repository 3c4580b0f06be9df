/**
 * The UpdateLog (update-log.ts) in PostgreSQL: one row per update id taken, in
 * `telegram_updates` (migrations/pg/003_telegram.sql), written before the update is handled.
 *
 * The database decides who takes an id: `admit` inserts the ids not known here with
 * `ON CONFLICT DO NOTHING` and returns those its insert took, so batches admitted at the same
 * time — in this process or in another — take each id once. It runs as a transaction, not a
 * bare statement: a connection lost during its COMMIT is resolved by the transaction's status
 * (Database.tx), so ids this process took are never mistaken for someone else's on a rerun.
 *
 * `has` and `size` are synchronous: they answer from memory — the ids of the last 7 days read
 * at `load`, and every id admitted since (taken here or found taken). An id another process
 * took after this one's `load` is not in `has` until this process admits it; `admit` is what
 * is sure. Rows older than 7 days are deleted at `load` and then at most once an hour.
 */
import type { Logger } from '../../core/log.js';
import type { Database } from '../../storage/pg/database.js';
import type { Portable } from '../../storage/portable.js';
import { forgetOldIds, updateLogLimits, type TakenUpdate, type UpdateLog, type UpdateLogOptions } from './update-log.js';

const PRUNE_EVERY_MS = 3600_000;

export class PgUpdateLog implements UpdateLog {
  /** id → time taken (ms), oldest first. */
  private readonly seen = new Map<number, number>();
  private readonly maxEntries: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  private prunedAt = 0;

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
    opts: UpdateLogOptions = {},
  ) {
    ({ maxEntries: this.maxEntries, maxAgeMs: this.maxAgeMs, now: this.now } = updateLogLimits(opts));
  }

  async load(): Promise<void> {
    await this.prune(this.now());
    const { rows } = await this.db.query<{ id: string; at: number }>(
      'SELECT update_id::text AS id, (extract(epoch FROM taken_at) * 1000)::float8 AS at FROM telegram_updates ORDER BY taken_at DESC, update_id DESC LIMIT $1',
      [this.maxEntries],
    );
    for (const r of rows.reverse()) this.seen.set(Number(r.id), r.at);
  }

  has(updateId: number): boolean {
    return this.seen.has(updateId);
  }

  get size(): number {
    return this.seen.size;
  }

  /** Stored when this resolves; an id is admitted by one call only, whatever the process. */
  async admit(updateIds: number[]): Promise<Set<number>> {
    const ask = [...new Set(updateIds)].filter((id) => !this.seen.has(id));
    if (ask.length === 0) return new Set();
    const at = this.now();
    const taken = await this.db.tx(async (sql) => {
      const { rows } = await sql.query<{ id: string }>(
        `INSERT INTO telegram_updates (update_id, taken_at)
           SELECT id, to_timestamp($2::float8 / 1000) FROM unnest($1::bigint[]) AS id
         ON CONFLICT (update_id) DO NOTHING RETURNING update_id::text AS id`,
        [ask, at],
      );
      return new Set(rows.map((r) => Number(r.id)));
    });
    // Taken by this call or before it by another process: either way, taken.
    for (const id of ask) this.seen.set(id, at);
    forgetOldIds(this.seen, at, this.maxEntries, this.maxAgeMs);
    if (at - this.prunedAt >= PRUNE_EVERY_MS) {
      await this.prune(at).catch((err: unknown) => this.log.warn({ err }, 'old update ids could not be deleted; tried again in an hour'));
    }
    return new Set(ask.filter((id) => taken.has(id)));
  }

  /** What moves between the modes: the rows, oldest first (FileUpdateLog.portable). */
  portable(): Portable<TakenUpdate> {
    const db = this.db;
    return {
      portableName: "Telegram's update log",
      dump: async function* () {
        const { rows } = await db.query<{ id: string; at: number }>(
          'SELECT update_id::text AS id, (extract(epoch FROM taken_at) * 1000)::float8 AS at FROM telegram_updates ORDER BY taken_at, update_id',
        );
        // Stored to the microsecond: whole milliseconds come back whole.
        for (const r of rows) yield { updateId: Number(r.id), takenAt: Math.round(r.at) };
      },
      load: async (items) => {
        const all: TakenUpdate[] = [];
        for await (const item of items) all.push(item);
        await db.query(
          `INSERT INTO telegram_updates (update_id, taken_at)
             SELECT id, to_timestamp(at / 1000) FROM unnest($1::bigint[], $2::float8[]) AS u(id, at)
           ON CONFLICT (update_id) DO UPDATE SET taken_at = EXCLUDED.taken_at`,
          [all.map((u) => u.updateId), all.map((u) => u.takenAt)],
        );
        return all.length;
      },
      isEmpty: async () => (await db.query('SELECT 1 FROM telegram_updates LIMIT 1')).rowCount === 0,
      clear: async () => void (await db.query('DELETE FROM telegram_updates')),
    };
  }

  private async prune(now: number): Promise<void> {
    this.prunedAt = now;
    await this.db.query('DELETE FROM telegram_updates WHERE taken_at < to_timestamp($1::float8 / 1000)', [now - this.maxAgeMs]);
  }
}
