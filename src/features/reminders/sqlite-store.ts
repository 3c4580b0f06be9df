/**
 * SqliteReminderStore, the reminders store (store.ts) on disk: `workspace/schedules.db`, its own
 * SQLite file rather than tables in memory.db — the memory index may be switched off (newer
 * schema) or paused (locked by a CLI run), and a reminder must fire regardless; its schema also
 * moves on its own, without the index's migrations.
 *
 * `reminders` holds what is scheduled (status pending → done | cancelled; a repeating one stays
 * pending and its due_at moves on). `deliveries` holds one row per occurrence being or having
 * been delivered; its primary key (reminder, due time) is what makes an occurrence claimable
 * once only. Every change is one transaction with synchronous=FULL, so a claim survives kill -9.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../core/log.js';
import { groupOf } from '../../core/group.js';
import { openSqlite, quickCheck, type Db } from '../../storage/sqlite.js';
import { WORKSPACE_FILES } from '../../storage/workspace-files.js';
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

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS reminders (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    chat       TEXT NOT NULL,
    channel    TEXT NOT NULL,
    chat_id    TEXT NOT NULL,
    text       TEXT NOT NULL,
    due_at     INTEGER NOT NULL,
    repeat     TEXT,
    timezone   TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    status     TEXT NOT NULL DEFAULT 'pending'
  );
  CREATE INDEX IF NOT EXISTS idx_reminders_due ON reminders(status, due_at);
  CREATE INDEX IF NOT EXISTS idx_reminders_chat ON reminders(chat, status);
  CREATE TABLE IF NOT EXISTS deliveries (
    reminder_id INTEGER NOT NULL,
    due_at      INTEGER NOT NULL,
    chat        TEXT NOT NULL,
    channel     TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    text        TEXT NOT NULL,
    repeat      TEXT,
    state       TEXT NOT NULL,
    claimed_at  INTEGER NOT NULL,
    sent_at     INTEGER,
    PRIMARY KEY (reminder_id, due_at)
  );
  CREATE INDEX IF NOT EXISTS idx_deliveries_state ON deliveries(state);
  CREATE INDEX IF NOT EXISTS idx_deliveries_chat ON deliveries(chat);
`;

/** Delivered occurrences are kept this long (for "did you remind me?" debugging), then dropped. */
const DELIVERY_KEEP_MS = 30 * 24 * 3600 * 1000;

export class SqliteReminderStore implements ReminderStore, Portable<ReminderItem> {
  readonly portableName = 'reminders';

  /** The workspace's schedules.db, made when missing. */
  static inWorkspace(workspaceDir: string, log: Logger, now?: number): SqliteReminderStore {
    return new SqliteReminderStore(path.join(workspaceDir, WORKSPACE_FILES.reminders), log, now);
  }

  /** The workspace's schedules.db when there is one; undefined (nothing made) when there is none (purge). */
  static existing(workspaceDir: string, log: Logger): SqliteReminderStore | undefined {
    const file = path.join(workspaceDir, WORKSPACE_FILES.reminders);
    return existsSync(file) ? new SqliteReminderStore(file, log) : undefined;
  }

  private readonly db: Db;

  /** Where a damaged schedules.db went when this one started empty: its reminders are not delivered. */
  readonly setAside: string | undefined;

  constructor(
    readonly file: string,
    log: Logger,
    now: number = Date.now(),
  ) {
    const opened = openSqlite(file, {
      busyTimeoutMs: 5000,
      synchronous: 'FULL',
      // Deleted rows are overwritten with zeros: a forgotten chat's reminders leave no bytes behind.
      secureDelete: true,
      setup: (db) => {
        db.exec(SCHEMA);
        quickCheck(db, file);
      },
      log,
      now,
    });
    const db = opened.db;
    this.setAside = opened.setAside;
    this.db = db;
    this.db.prepare("DELETE FROM deliveries WHERE state != 'claimed' AND claimed_at < ?").run(now - DELIVERY_KEEP_MS);
  }

  async add(r: Omit<Reminder, 'id'>): Promise<Reminder> {
    const info = this.db
      .prepare('INSERT INTO reminders (chat, channel, chat_id, text, due_at, repeat, timezone, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(r.chat, r.channel, r.chatId, r.text, r.dueAt, r.repeat, r.timezone, r.createdAt);
    return { ...r, id: Number(info.lastInsertRowid) };
  }

  /** This chat's pending reminders, soonest first. */
  async pending(chat: string): Promise<Reminder[]> {
    return (this.db.prepare("SELECT * FROM reminders WHERE chat = ? AND status = 'pending' ORDER BY due_at, id").all(chat) as ReminderRow[]).map(toReminder);
  }

  async countPending(chat: string): Promise<number> {
    return (this.db.prepare("SELECT COUNT(*) AS n FROM reminders WHERE chat = ? AND status = 'pending'").get(chat) as { n: number }).n;
  }

  /**
   * Pending reminders of a group and its forum topics together (`group`: a group's key, see
   * core/group.ts); a private chat is its own group. A topic's key is the group's, `:`, its
   * thread: the keys from "group:" up to "group;" (the next character), then checked with groupOf.
   */
  async countPendingInGroup(group: string): Promise<number> {
    const rows = this.db
      .prepare("SELECT chat, COUNT(*) AS n FROM reminders WHERE status = 'pending' AND (chat = ? OR (chat >= ? AND chat < ?)) GROUP BY chat")
      .all(group, `${group}:`, `${group};`) as Array<{ chat: string; n: number }>;
    return rows.filter((r) => groupOf(r.chat) === group).reduce((sum, r) => sum + r.n, 0);
  }

  /** Cancels one of this chat's pending reminders; undefined when there is no such pending one. */
  async cancel(chat: string, id: number): Promise<Reminder | undefined> {
    const row = this.db.prepare("SELECT * FROM reminders WHERE chat = ? AND id = ? AND status = 'pending'").get(chat, id) as ReminderRow | undefined;
    if (!row) return undefined;
    this.db.prepare("UPDATE reminders SET status = 'cancelled' WHERE id = ? AND status = 'pending'").run(id);
    return toReminder(row);
  }

  /** Pending reminders due at or before `at` on these channels, oldest first. */
  async due(at: number, channels: string[]): Promise<Reminder[]> {
    if (channels.length === 0) return [];
    const marks = channels.map(() => '?').join(',');
    return (
      this.db
        .prepare(`SELECT * FROM reminders WHERE status = 'pending' AND due_at <= ? AND channel IN (${marks}) ORDER BY due_at, id`)
        .all(at, ...channels) as ReminderRow[]
    ).map(toReminder);
  }

  /** The soonest due time of a pending reminder on these channels, leaving out the chats `skip` names (held ones). */
  async nextDue(channels: string[], skip?: (chat: string) => boolean): Promise<number | undefined> {
    if (channels.length === 0) return undefined;
    const marks = channels.map(() => '?').join(',');
    if (!skip) {
      const row = this.db.prepare(`SELECT MIN(due_at) AS at FROM reminders WHERE status = 'pending' AND channel IN (${marks})`).get(...channels) as {
        at: number | null;
      };
      return row.at ?? undefined;
    }
    const rows = this.db
      .prepare(`SELECT chat, MIN(due_at) AS at FROM reminders WHERE status = 'pending' AND channel IN (${marks}) GROUP BY chat`)
      .all(...channels) as Array<{ chat: string; at: number }>;
    let next: number | undefined;
    for (const r of rows) if (!skip(r.chat) && (next === undefined || r.at < next)) next = r.at;
    return next;
  }

  /**
   * Claims the occurrence `r.dueAt` for delivery, in one transaction: a one-time reminder
   * becomes done, a repeating one moves on to `next`, and a delivery row is written. Returns
   * the delivery, or undefined when someone else claimed or cancelled it first.
   */
  async claim(r: Reminder, next: number | null, now: number): Promise<Delivery | undefined> {
    return this.db.transaction((): Delivery | undefined => {
      const moved =
        next === null
          ? this.db.prepare("UPDATE reminders SET status = 'done' WHERE id = ? AND status = 'pending' AND due_at = ?").run(r.id, r.dueAt)
          : this.db.prepare("UPDATE reminders SET due_at = ? WHERE id = ? AND status = 'pending' AND due_at = ?").run(next, r.id, r.dueAt);
      if (moved.changes === 0) return undefined;
      const d = claimOf(r, now);
      this.db
        .prepare(
          'INSERT OR IGNORE INTO deliveries (reminder_id, due_at, chat, channel, chat_id, text, repeat, state, claimed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(d.reminderId, d.dueAt, d.chat, d.channel, d.chatId, d.text, d.repeat, d.state, d.claimedAt);
      return d;
    })();
  }

  /** Occurrences claimed but not finished (a kill in between), on these channels (all when omitted). */
  async claimed(channels?: string[]): Promise<Delivery[]> {
    const rows = this.db.prepare("SELECT * FROM deliveries WHERE state = 'claimed' ORDER BY due_at").all() as DeliveryRow[];
    return rows.map(toDelivery).filter((d) => !channels || channels.includes(d.channel));
  }

  async finish(d: Pick<Delivery, 'reminderId' | 'dueAt'>, state: 'sent' | 'failed', at: number): Promise<void> {
    this.db.prepare('UPDATE deliveries SET state = ?, sent_at = ? WHERE reminder_id = ? AND due_at = ?').run(state, at, d.reminderId, d.dueAt);
  }

  /** Delivered occurrences of a chat (tests, debugging). */
  async deliveries(chat: string): Promise<Delivery[]> {
    return (this.db.prepare('SELECT * FROM deliveries WHERE chat = ? ORDER BY due_at').all(chat) as DeliveryRow[]).map(toDelivery);
  }

  /** Every chat with reminders or delivery records (purge finds a group's forum topics among them). */
  async chats(): Promise<string[]> {
    return (this.db.prepare('SELECT chat FROM reminders UNION SELECT chat FROM deliveries').all() as Array<{ chat: string }>).map((r) => r.chat);
  }

  /**
   * Removes every reminder and delivery record of a chat (purge, forget). With secure_delete
   * and a truncating checkpoint, no byte of their text stays in the file or its WAL.
   */
  async deleteChat(chat: string): Promise<number> {
    const n = this.db.transaction(() => {
      const r = this.db.prepare('DELETE FROM reminders WHERE chat = ?').run(chat).changes;
      this.db.prepare('DELETE FROM deliveries WHERE chat = ?').run(chat);
      return r;
    })();
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    return n;
  }

  /** This chat's reminders (any status) whose text `test` accepts, and their delivery records: deleted, WAL truncated. */
  async deleteMatching(chat: string, test: (text: string) => boolean): Promise<number> {
    const ids = (this.db.prepare('SELECT id, text FROM reminders WHERE chat = ?').all(chat) as Array<{ id: number; text: string }>)
      .filter((r) => test(r.text))
      .map((r) => r.id);
    if (ids.length === 0) return 0;
    this.db.transaction(() => {
      for (const id of ids) {
        this.db.prepare('DELETE FROM reminders WHERE id = ?').run(id);
        this.db.prepare('DELETE FROM deliveries WHERE reminder_id = ?').run(id);
      }
    })();
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    return ids.length;
  }

  /** How many of this chat's reminders (any status) have a text `test` accepts. */
  async countMatching(chat: string, test: (text: string) => boolean): Promise<number> {
    return (this.db.prepare('SELECT text FROM reminders WHERE chat = ?').all(chat) as Array<{ text: string }>).filter((r) => test(r.text)).length;
  }

  /** Every reminder and delivery record, and the last id handed out (ids are kept: sessions name occurrences by them). */
  async *dump(): AsyncIterable<ReminderItem> {
    const seq = this.db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'reminders'").get() as { seq: number } | undefined;
    if (seq) yield { type: 'lastId', id: seq.seq };
    for (const r of this.db.prepare('SELECT * FROM reminders ORDER BY id').iterate() as Iterable<ReminderRow>) yield reminderItem(r);
    for (const d of this.db.prepare('SELECT * FROM deliveries ORDER BY reminder_id, due_at').iterate() as Iterable<DeliveryRow>) yield deliveryItem(d);
  }

  async load(items: AsyncIterable<ReminderItem>): Promise<number> {
    const all: ReminderItem[] = [];
    for await (const i of items) all.push(i);
    const addReminder = this.db.prepare(`INSERT INTO reminders (${REMINDER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    const addDelivery = this.db.prepare(`INSERT INTO deliveries (${DELIVERY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.db.transaction(() => {
      for (const i of all) {
        if (i.type === 'reminder') addReminder.run(...reminderValues(i));
        else if (i.type === 'delivery') addDelivery.run(...deliveryValues(i));
      }
      // AUTOINCREMENT's counter: never below an id handed out before, deleted ones included.
      for (const i of all)
        if (i.type === 'lastId') {
          const moved = this.db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'reminders'").run(i.id).changes;
          if (moved === 0) this.db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('reminders', ?)").run(i.id);
        }
    })();
    return all.length;
  }

  async isEmpty(): Promise<boolean> {
    return !this.db.prepare('SELECT 1 FROM reminders UNION ALL SELECT 1 FROM deliveries LIMIT 1').get();
  }

  async clear(): Promise<void> {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM reminders').run();
      this.db.prepare('DELETE FROM deliveries').run();
      this.db.prepare("DELETE FROM sqlite_sequence WHERE name = 'reminders'").run();
    })();
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
