/**
 * PgReminderStore, the reminders store (store.ts) in PostgreSQL: `reminders` and
 * `reminder_deliveries` (migrations/pg/050_reminders.sql), the same columns as schedules.db.
 *
 * Nothing is held in memory: every call asks the database, so what one process schedules,
 * cancels or claims is what the next call of any process sees. The promise the service builds
 * on — an occurrence is claimed once only, by this process or another — is the claim's one
 * transaction: its UPDATE moves the reminder on only where it is still pending at the
 * occurrence's due time (`RETURNING` says whether it did), which takes the row's lock, so a
 * second process's UPDATE waits for the first to commit, then finds the due time moved (or the
 * status done) and changes nothing. The delivery record is inserted in the same transaction: a
 * claim is committed with its record or not at all, and a kill after the COMMIT leaves it among
 * `claimed` for the next start (service.ts settles it).
 *
 * Times are epoch ms in bigint columns (text from the driver, made numbers in rows.ts). Text
 * sorts as bytes (`COLLATE "C"`), as SQLite's does, so both stores list in the same order.
 */
import { groupOf } from '../../core/group.js';
import type { Database } from '../../storage/pg/database.js';
import { insertRows } from '../../storage/pg/insert.js';
import { ownerAlive } from '../../storage/pg/owner.js';
import type { Portable } from '../../storage/portable.js';
import type { Delivery, Reminder, ReminderItem, ReminderStore } from './store.js';
import {
  claimOf,
  DELIVERY_COLUMNS,
  deliveryItem,
  deliveryValues,
  REMINDER_COLUMNS,
  reminderItem,
  reminderValues,
  toDelivery,
  toReminder,
  type DeliveryRow,
  type ReminderRow,
} from './rows.js';

/** Delivered occurrences are kept this long (as in schedules.db), then dropped at open. */
const DELIVERY_KEEP_MS = 30 * 24 * 3600 * 1000;

export class PgReminderStore implements ReminderStore, Portable<ReminderItem> {
  readonly portableName = 'reminders';

  /** A store on `db` (migrated); finished delivery records older than 30 days are dropped. */
  static async open(db: Database, now: number = Date.now()): Promise<PgReminderStore> {
    await db.query("DELETE FROM reminder_deliveries WHERE state != 'claimed' AND claimed_at < $1", [now - DELIVERY_KEEP_MS]);
    return new PgReminderStore(db);
  }

  private constructor(private readonly db: Database) {}

  async add(r: Omit<Reminder, 'id'>): Promise<Reminder> {
    const { rows } = await this.db.query<{ id: string }>(
      'INSERT INTO reminders (chat, channel, chat_id, text, due_at, repeat, timezone, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id',
      [r.chat, r.channel, r.chatId, r.text, r.dueAt, r.repeat, r.timezone, r.createdAt],
    );
    return { ...r, id: Number(rows[0]!.id) };
  }

  async pending(chat: string): Promise<Reminder[]> {
    const { rows } = await this.db.query<ReminderRow & Record<string, unknown>>(
      "SELECT * FROM reminders WHERE chat = $1 AND status = 'pending' ORDER BY due_at, id",
      [chat],
    );
    return rows.map(toReminder);
  }

  async countPending(chat: string): Promise<number> {
    const { rows } = await this.db.query<{ n: string }>("SELECT count(*) AS n FROM reminders WHERE chat = $1 AND status = 'pending'", [chat]);
    return Number(rows[0]!.n);
  }

  /** A group's and its topics' keys start with the group's and `:`; groupOf decides (as in schedules.db). */
  async countPendingInGroup(group: string): Promise<number> {
    const { rows } = await this.db.query<{ chat: string; n: string }>(
      "SELECT chat, count(*) AS n FROM reminders WHERE status = 'pending' AND (chat = $1 OR starts_with(chat, $2)) GROUP BY chat",
      [group, `${group}:`],
    );
    return rows.filter((r) => groupOf(r.chat) === group).reduce((sum, r) => sum + Number(r.n), 0);
  }

  /** One statement: only a pending one of this chat is cancelled, and it is returned as it was. */
  async cancel(chat: string, id: number): Promise<Reminder | undefined> {
    const { rows } = await this.db.query<ReminderRow & Record<string, unknown>>(
      "UPDATE reminders SET status = 'cancelled' WHERE chat = $1 AND id = $2 AND status = 'pending' RETURNING *",
      [chat, id],
    );
    return rows[0] ? toReminder(rows[0]) : undefined;
  }

  async due(at: number, channels: string[]): Promise<Reminder[]> {
    if (channels.length === 0) return [];
    const { rows } = await this.db.query<ReminderRow & Record<string, unknown>>(
      "SELECT * FROM reminders WHERE status = 'pending' AND due_at <= $1 AND channel = ANY($2::text[]) ORDER BY due_at, id",
      [at, channels],
    );
    return rows.map(toReminder);
  }

  async nextDue(channels: string[], skip?: (chat: string) => boolean): Promise<number | undefined> {
    if (channels.length === 0) return undefined;
    const { rows } = await this.db.query<{ chat: string; at: string }>(
      "SELECT chat, min(due_at) AS at FROM reminders WHERE status = 'pending' AND channel = ANY($1::text[]) GROUP BY chat",
      [channels],
    );
    let next: number | undefined;
    for (const r of rows) if (!skip?.(r.chat) && (next === undefined || Number(r.at) < next)) next = Number(r.at);
    return next;
  }

  /** One transaction: the conditional UPDATE takes the occurrence (or finds it taken), the record goes with it. */
  /** The process claims are recorded as (in a cluster). */
  private owner: { id: string; leaseMs: number } | undefined;

  ownedBy(process: string, leaseMs: number): void {
    this.owner = { id: process, leaseMs };
  }

  async claim(r: Reminder, next: number | null, now: number): Promise<Delivery | undefined> {
    const d = claimOf(r, now);
    return this.db.tx(async (sql) => {
      const moved =
        next === null
          ? await sql.query("UPDATE reminders SET status = 'done' WHERE id = $1 AND status = 'pending' AND due_at = $2 RETURNING id", [r.id, r.dueAt])
          : await sql.query("UPDATE reminders SET due_at = $1 WHERE id = $2 AND status = 'pending' AND due_at = $3 RETURNING id", [next, r.id, r.dueAt]);
      if (moved.rowCount === 0) return undefined;
      await sql.query(
        `INSERT INTO reminder_deliveries (reminder_id, due_at, chat, channel, chat_id, text, repeat, state, claimed_at, owner)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
        [d.reminderId, d.dueAt, d.chat, d.channel, d.chatId, d.text, d.repeat, d.state, d.claimedAt, this.owner?.id ?? null],
      );
      return d;
    });
  }

  async claimed(channels?: string[]): Promise<Delivery[]> {
    if (this.owner) return this.takeOver(channels);
    const { rows } = await this.db.query<DeliveryRow & Record<string, unknown>>(
      "SELECT * FROM reminder_deliveries WHERE state = 'claimed' AND ($1::text[] IS NULL OR channel = ANY($1::text[])) ORDER BY due_at, reminder_id",
      [channels ?? null],
    );
    return rows.map(toDelivery);
  }

  /**
   * In a cluster: the open claims of processes no longer alive (by their heartbeat and the
   * database's clock) become this one's, in one statement — a second process running it at the
   * same moment waits for the rows, then finds them alive-owned and takes none.
   */
  private async takeOver(channels: string[] | undefined): Promise<Delivery[]> {
    const me = this.owner!;
    const { rows } = await this.db.query<DeliveryRow & Record<string, unknown>>(
      `UPDATE reminder_deliveries d SET owner = $2
        WHERE state = 'claimed' AND ($1::text[] IS NULL OR channel = ANY($1::text[])) AND (d.owner IS NULL OR (d.owner <> $2 AND NOT ${ownerAlive('d.owner', '$3')}))
        RETURNING *`,
      [channels ?? null, me.id, me.leaseMs],
    );
    return rows.map(toDelivery).sort((a, b) => a.dueAt - b.dueAt || a.reminderId - b.reminderId);
  }

  async finish(d: Pick<Delivery, 'reminderId' | 'dueAt'>, state: 'sent' | 'failed', at: number): Promise<void> {
    await this.db.query('UPDATE reminder_deliveries SET state = $1, sent_at = $2 WHERE reminder_id = $3 AND due_at = $4', [state, at, d.reminderId, d.dueAt]);
  }

  async deliveries(chat: string): Promise<Delivery[]> {
    const { rows } = await this.db.query<DeliveryRow & Record<string, unknown>>(
      'SELECT * FROM reminder_deliveries WHERE chat = $1 ORDER BY due_at, reminder_id',
      [chat],
    );
    return rows.map(toDelivery);
  }

  async chats(): Promise<string[]> {
    const { rows } = await this.db.query<{ chat: string }>('SELECT chat FROM reminders UNION SELECT chat FROM reminder_deliveries');
    return rows.map((r) => r.chat);
  }

  /** Both tables' rows of the chat in one transaction (the old row versions go at VACUUM, as docs/postgres.md says). */
  async deleteChat(chat: string): Promise<number> {
    return this.db.tx(async (sql) => {
      const { rowCount } = await sql.query('DELETE FROM reminders WHERE chat = $1', [chat]);
      await sql.query('DELETE FROM reminder_deliveries WHERE chat = $1', [chat]);
      return rowCount;
    });
  }

  /** The texts are tested here (`test` is code, not SQL); the ones it accepts go with their delivery records, in one transaction. */
  async deleteMatching(chat: string, test: (text: string) => boolean): Promise<number> {
    const ids = await this.matching(chat, test);
    if (ids.length === 0) return 0;
    await this.db.tx(async (sql) => {
      await sql.query('DELETE FROM reminders WHERE chat = $1 AND id = ANY($2::bigint[])', [chat, ids]);
      await sql.query('DELETE FROM reminder_deliveries WHERE chat = $1 AND reminder_id = ANY($2::bigint[])', [chat, ids]);
    });
    return ids.length;
  }

  async countMatching(chat: string, test: (text: string) => boolean): Promise<number> {
    return (await this.matching(chat, test)).length;
  }

  /** The ids of this chat's reminders (any status) whose text `test` accepts. */
  private async matching(chat: string, test: (text: string) => boolean): Promise<number[]> {
    const { rows } = await this.db.query<{ id: string; text: string }>('SELECT id, text FROM reminders WHERE chat = $1', [chat]);
    return rows.filter((r) => test(r.text)).map((r) => Number(r.id));
  }

  /** The Database is the caller's (several stores share it): nothing to let go of here. */
  async close(): Promise<void> {}

  /** The last id handed out (the sequence's, when it was ever called), every reminder by id, every delivery record. */
  async *dump(): AsyncIterable<ReminderItem> {
    // One snapshot for all three reads.
    const [seq, reminders, deliveries] = await this.db.tx(
      async (sql) => [
        await sql.query<{ last: string; called: boolean }>('SELECT last_value AS last, is_called AS called FROM reminders_id_seq'),
        await sql.query<ReminderRow & Record<string, unknown>>('SELECT * FROM reminders ORDER BY id'),
        await sql.query<DeliveryRow & Record<string, unknown>>('SELECT * FROM reminder_deliveries ORDER BY reminder_id, due_at'),
      ],
      { isolation: 'repeatable read' },
    );
    const s = seq.rows[0];
    if (s?.called) yield { type: 'lastId', id: Number(s.last) };
    for (const r of reminders.rows) yield reminderItem(r);
    for (const d of deliveries.rows) yield deliveryItem(d);
  }

  /** In one transaction, ids kept; the sequence moves past the last id handed out, so no id is handed out twice. */
  async load(items: AsyncIterable<ReminderItem>): Promise<number> {
    const all: ReminderItem[] = [];
    for await (const i of items) all.push(i);
    const reminders = all.filter((i) => i.type === 'reminder');
    const deliveries = all.filter((i) => i.type === 'delivery');
    const last = Math.max(0, ...all.map((i) => (i.type === 'lastId' ? i.id : i.type === 'reminder' ? i.reminder.id : 0)));
    await this.db.tx(async (sql) => {
      await insertRows(sql, 'reminders', REMINDER_COLUMNS, reminders.map(reminderValues));
      await insertRows(sql, 'reminder_deliveries', DELIVERY_COLUMNS, deliveries.map(deliveryValues));
      if (last > 0) await sql.query("SELECT setval('reminders_id_seq', greatest($1::bigint, (SELECT max(id) FROM reminders)))", [last]);
    });
    return all.length;
  }

  async isEmpty(): Promise<boolean> {
    const { rows } = await this.db.query('SELECT 1 FROM reminders UNION ALL SELECT 1 FROM reminder_deliveries LIMIT 1');
    return rows.length === 0;
  }

  /** Both tables emptied and the ids started again, in one transaction. */
  async clear(): Promise<void> {
    await this.db.tx(async (sql) => {
      await sql.query('DELETE FROM reminders');
      await sql.query('DELETE FROM reminder_deliveries');
      await sql.query("SELECT setval('reminders_id_seq', 1, false)");
    });
  }
}
