/**
 * PendingWrites (memory/pending.ts) in PostgreSQL: one row per held write in `pending_writes`
 * (migrations/pg/082_pending_writes.sql), its record as the same JSON text the file holds. Each
 * call is one statement, committed when it resolves. `take` is a `DELETE … RETURNING`: of two
 * processes (or two approvals) taking one write, only one gets it. Expired rows are deleted by
 * the next call that lists or takes; a /forget deletes the rows whose words match (their old
 * row versions stay in the table's pages until VACUUM, as for the other tables).
 */
import type { Database } from '../../storage/pg/database.js';
import { byHeld, expired, pendingTexts, type PendingWrite, type PendingWrites } from '../pending.js';

/** `held_at, id` in the order the file keeps (byte order, as `localeCompare` of ISO times and ids). */
const ORDER = 'ORDER BY held_at COLLATE "C", id COLLATE "C"';

export class PgPendingWrites implements PendingWrites {
  readonly portableName = 'held memory writes';

  constructor(private readonly db: Database) {}

  async hold(w: PendingWrite): Promise<void> {
    await this.db.query('INSERT INTO pending_writes (id, scope, channel, chat_id, held_at, expires_at, record) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      w.id,
      w.scope,
      w.channel,
      w.chatId,
      w.heldAt,
      w.expiresAt,
      JSON.stringify(w),
    ]);
  }

  private async dropExpired(now: Date): Promise<void> {
    await this.db.query('DELETE FROM pending_writes WHERE expires_at <= $1', [now.toISOString()]);
  }

  private async rows(where: string, params: unknown[]): Promise<PendingWrite[]> {
    const { rows } = await this.db.query<{ record: string }>(`SELECT record FROM pending_writes ${where} ${ORDER}`, params);
    return rows.map((r) => JSON.parse(r.record) as PendingWrite);
  }

  async list(scope: string, now = new Date()): Promise<PendingWrite[]> {
    await this.dropExpired(now);
    return this.rows('WHERE scope = $1', [scope]);
  }

  async take(scope: string, id: string, now = new Date()): Promise<PendingWrite | undefined> {
    const { rows } = await this.db.query<{ record: string }>('DELETE FROM pending_writes WHERE scope = $1 AND id = $2 RETURNING record', [scope, id]);
    await this.dropExpired(now);
    const found = rows[0] ? (JSON.parse(rows[0].record) as PendingWrite) : undefined;
    return found && !expired(found, now) ? found : undefined;
  }

  private async matchingIds(scope: string, test: (text: string) => boolean): Promise<string[]> {
    return (await this.rows('WHERE scope = $1', [scope])).filter((w) => pendingTexts(w).some(test)).map((w) => w.id);
  }

  async matching(scope: string, test: (text: string) => boolean): Promise<number> {
    return (await this.matchingIds(scope, test)).length;
  }

  async forget(scope: string, test: (text: string) => boolean): Promise<number> {
    const ids = await this.matchingIds(scope, test);
    if (ids.length === 0) return 0;
    const { rowCount } = await this.db.query('DELETE FROM pending_writes WHERE scope = $1 AND id = ANY($2)', [scope, ids]);
    return rowCount ?? 0;
  }

  async chats(): Promise<string[]> {
    const { rows } = await this.db.query<{ chat: string }>("SELECT DISTINCT channel || ':' || chat_id AS chat FROM pending_writes");
    return rows.map((r) => r.chat);
  }

  async erase(channel: string, chatId: string): Promise<number> {
    const { rowCount } = await this.db.query('DELETE FROM pending_writes WHERE channel = $1 AND chat_id = $2', [channel, chatId]);
    return rowCount ?? 0;
  }

  async *dump(): AsyncIterable<PendingWrite> {
    yield* (await this.rows('', [])).sort(byHeld);
  }

  async load(items: AsyncIterable<PendingWrite>): Promise<number> {
    let n = 0;
    for await (const w of items) {
      await this.hold(w);
      n++;
    }
    return n;
  }

  async isEmpty(): Promise<boolean> {
    const { rows } = await this.db.query('SELECT 1 FROM pending_writes LIMIT 1');
    return rows.length === 0;
  }

  async clear(): Promise<void> {
    await this.db.query('DELETE FROM pending_writes');
  }
}
