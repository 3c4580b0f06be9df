/**
 * The intake journal (inbox.ts) in PostgreSQL: one row per accepted message in `inbox`
 * (migrations/pg/010_inbox.sql), closed by `done_at`.
 *
 * `durable` resolves once the row's INSERT is committed (the server's synchronous commit: it
 * survives a kill of this process and of the server). Writes run one after another, as the
 * file's lines do: a start, a call or a done never reaches the database before the accept it
 * follows, and /forget's redaction sees every message accepted before it. Accepts that arrive
 * while a write is under way go together in the next INSERT (one commit for all, in their
 * order), so a burst of messages costs one round trip, not one each.
 *
 * What is rerun after a lost connection is the same done twice: the INSERT skips an id already
 * there, a call's mark and a done set a value; a start counts once, in a transaction (Database.tx
 * resolves one cut off during COMMIT). Ids are 96 random bits: several processes share the table.
 *
 * Closed rows stay a day (chats() and erase() see them, as the file's lines until it is
 * emptied), then are deleted, at most once an hour. A row's words are taken out for good:
 * redact and erase rewrite the table afterwards (VACUUM FULL), since PostgreSQL keeps an old
 * row version's bytes in the table file until then (docs/postgres.md, "The intake journal").
 */
import { randomBytes } from 'node:crypto';
import type { InboundMessage } from '../core/message.js';
import type { Logger } from '../core/log.js';
import type { Database } from '../storage/pg/database.js';
import { redactValue, type Redaction } from '../storage/redaction.js';
import { KnownMessages, argumentsHash, messageKey, type Inbox, type InboxEntry, type InterruptedCall, type JournalEntry } from './inbox.js';

const KEEP_CLOSED_MS = 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;

/** The columns `journalEntryOf` reads (ENTRY_COLUMNS selects them). */
export type EntryRow = {
  id: string;
  msg: string;
  attempt: number;
  interrupted: InterruptedCall[];
  completed: InterruptedCall[];
  call_tool: string | null;
  call_args: string | null;
  open: boolean;
  copy_of: string | null;
};
/** The select list of an EntryRow, for a query on `inbox`. */
export const ENTRY_COLUMNS = 'id, msg, attempt, interrupted, completed, call_tool, call_args, done_at IS NULL AS open, copy_of';

/** An entry as its row holds it; a tool call still marked as under way is one the process died in: it is `interrupted`. */
export function journalEntryOf(r: EntryRow): JournalEntry {
  const raw = JSON.parse(r.msg) as InboundMessage & { receivedAt: string };
  const msg = { ...raw, receivedAt: new Date(raw.receivedAt) };
  const running = r.call_tool === null ? [] : [{ tool: r.call_tool, args: r.call_args ?? '' }];
  return {
    id: r.id,
    msg,
    interrupted: r.open ? [...r.interrupted, ...running] : [],
    completed: r.open ? r.completed : [],
    attempt: 0,
    key: messageKey(msg),
    open: r.open,
    copy: r.copy_of !== null,
    carried: 0,
    starts: r.attempt,
  };
}

type Accepted = { id: string; msg: InboundMessage; copyOf?: string | undefined };

export class PgInbox implements Inbox {
  /** Ids this run accepted or adopted and has not closed: the only ones it marks. */
  private readonly pending = new Set<string>();
  /** The journal's messages, to recognise a copy (inbox.ts); filled by unfinished() and accepts. */
  private readonly known = new KnownMessages();
  /** The newest write; writes run one after another. */
  private tail: Promise<void> = Promise.resolve();
  /** Accepts waiting for the next INSERT (one not yet begun), and that INSERT. */
  private batch: { rows: Accepted[]; written: Promise<void> } | undefined;
  private prunedAt = 0;

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  async unfinished(): Promise<{ entries: InboxEntry[]; duplicates: string[] }> {
    await this.tail;
    // Closed rows too (kept a day): a copy of a message closed under them is not handled again.
    const { rows } = await this.db.query<EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM inbox ORDER BY seq`);
    return this.known.merge(rows.map(journalEntryOf));
  }

  close(ids: string[]): Promise<void> {
    return this.closeRows(ids);
  }

  accept(msg: InboundMessage): { id: string; durable: Promise<void>; copyOf?: string } {
    const id = randomBytes(12).toString('hex');
    const copyOf = this.known.copyOf(msg);
    if (copyOf === undefined) {
      this.known.remember(messageKey(msg), id);
      this.pending.add(id);
    }
    if (!this.batch) {
      const rows: Accepted[] = [];
      const written = this.serial(() => {
        if (this.batch?.rows === rows) this.batch = undefined;
        return this.insert(rows);
      });
      this.batch = { rows, written };
    }
    this.batch.rows.push({ id, msg, copyOf });
    return copyOf === undefined ? { id, durable: this.batch.written } : { id, copyOf, durable: this.batch.written };
  }

  adopt(id: string): { id: string; durable: Promise<void> } {
    this.pending.add(id);
    return { id, durable: Promise.resolve() };
  }

  /** Counts a start; a call still marked from an earlier run joins the entry's interrupted ones. */
  async started(id: string): Promise<void> {
    if (!this.pending.has(id)) return;
    await this.serial(() =>
      this.db.tx((sql) =>
        sql.query(
          `UPDATE inbox SET attempt = attempt + 1, call_tool = NULL, call_args = NULL,
             interrupted = CASE WHEN call_tool IS NULL THEN interrupted
               ELSE interrupted || jsonb_build_array(jsonb_build_object('tool', call_tool, 'args', coalesce(call_args, ''))) END
           WHERE id = $1 AND done_at IS NULL`,
          [id],
        ),
      ),
    );
  }

  async callStarted(id: string, tool: string, args: string): Promise<void> {
    if (!this.pending.has(id)) return;
    await this.serial(() =>
      this.db.query('UPDATE inbox SET call_tool = $2, call_args = $3 WHERE id = $1 AND done_at IS NULL', [id, tool, argumentsHash(args)]),
    );
  }

  async callEnded(id: string): Promise<void> {
    if (!this.pending.has(id)) return;
    await this.serial(() =>
      this.db.query(
        `UPDATE inbox SET call_tool = NULL, call_args = NULL,
           completed = CASE WHEN call_tool IS NULL THEN completed
             ELSE completed || jsonb_build_array(jsonb_build_object('tool', call_tool, 'args', coalesce(call_args, ''))) END
         WHERE id = $1 AND done_at IS NULL`,
        [id],
      ),
    );
  }

  /** Closes the entry and `others` in one statement: an album is answered whole or not at all. */
  async done(id: string, others: string[] = []): Promise<void> {
    const ids = [id, ...others].filter((x) => this.pending.delete(x));
    if (ids.length === 0) return;
    await this.closeRows(ids);
    const at = this.now();
    if (at - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = at;
    await this.serial(() =>
      this.db.query('DELETE FROM inbox WHERE done_at < to_timestamp($1::float8 / 1000)', [at - KEEP_CLOSED_MS]).then(
        () => undefined,
        (err: unknown) => this.log.warn({ err }, 'closed inbox entries could not be deleted; tried again in an hour'),
      ),
    );
  }

  /** The chat's messages with the words taken out, in one transaction that holds their rows; the old row versions are then scrubbed. */
  async redact(channel: string, chatId: string, words: Redaction): Promise<boolean> {
    const changed = await this.serial(() =>
      this.db.tx(async (sql) => {
        const { rows } = await sql.query<{ id: string; msg: string }>('SELECT id, msg FROM inbox WHERE channel = $1 AND chat_id = $2 FOR UPDATE', [
          channel,
          chatId,
        ]);
        const next = rows.map((r) => ({ id: r.id, msg: JSON.stringify(redactValue(JSON.parse(r.msg), words)) })).filter((r, i) => r.msg !== rows[i]!.msg);
        if (next.length > 0)
          await sql.query('UPDATE inbox SET msg = r.msg FROM unnest($1::text[], $2::text[]) AS r(id, msg) WHERE inbox.id = r.id', [
            next.map((r) => r.id),
            next.map((r) => r.msg),
          ]);
        return next.length;
      }),
    );
    if (changed > 0) await this.scrub();
    return changed > 0;
  }

  async chats(): Promise<Array<{ channel: string; chatId: string }>> {
    await this.tail;
    const { rows } = await this.db.query<{ channel: string; chat_id: string }>('SELECT DISTINCT channel, chat_id FROM inbox');
    return rows.map((r) => ({ channel: r.channel, chatId: r.chat_id }));
  }

  /** Deletes the chats' rows, open or closed, then scrubs the table: no byte of them left in it. */
  async erase(chats: Array<{ channel: string; chatId: string }>): Promise<string[]> {
    const gone = await this.serial(() =>
      this.db.tx(async (sql) => {
        const { rows } = await sql.query<{ id: string }>(
          'DELETE FROM inbox USING unnest($1::text[], $2::text[]) AS c(channel, chat_id) WHERE inbox.channel = c.channel AND inbox.chat_id = c.chat_id RETURNING inbox.id',
          [chats.map((c) => c.channel), chats.map((c) => c.chatId)],
        );
        return rows.map((r) => r.id);
      }),
    );
    for (const id of gone) this.pending.delete(id);
    this.known.forget(new Set(gone));
    if (gone.length === 0) return [];
    await this.scrub();
    return [`${gone.length} entr${gone.length === 1 ? 'y' : 'ies'} of the inbox journal in the inbox table`];
  }

  /** Waits for the writes under way; the connections are the Database's, closed by its owner. */
  shutdown(): Promise<void> {
    return this.tail;
  }

  private insert(rows: Accepted[]): Promise<void> {
    return this.db
      .query(
        `INSERT INTO inbox (id, channel, chat_id, msg, copy_of, done_at)
           SELECT id, channel, chat_id, msg, copy_of, CASE WHEN copy_of IS NULL THEN NULL ELSE now() END
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS r(id, channel, chat_id, msg, copy_of, n)
           ORDER BY n
         ON CONFLICT (id) DO NOTHING`,
        [
          rows.map((r) => r.id),
          rows.map((r) => r.msg.channel),
          rows.map((r) => r.msg.chatId),
          rows.map((r) => JSON.stringify({ ...r.msg, receivedAt: r.msg.receivedAt.toISOString() })),
          rows.map((r) => r.copyOf ?? null),
        ],
      )
      .then(() => undefined);
  }

  private closeRows(ids: string[]): Promise<void> {
    if (ids.length === 0) return Promise.resolve();
    return this.serial(() =>
      this.db
        .query('UPDATE inbox SET done_at = coalesce(done_at, to_timestamp($2::float8 / 1000)) WHERE id = ANY($1::text[])', [ids, this.now()])
        .then(() => undefined),
    );
  }

  /**
   * Rewrites the table without the dead row versions that still hold erased or redacted words (a
   * plain VACUUM frees their space without overwriting it). The table holds the open entries and
   * a day of closed ones: the rewrite is short, and accepts wait for it.
   */
  private scrub(): Promise<void> {
    return this.serial(() => this.db.query('VACUUM (FULL) inbox').then(() => undefined));
  }

  /** Runs `write` after every write before it, whatever their outcome. */
  private serial<T>(write: () => Promise<T>): Promise<T> {
    const run = this.tail.then(write);
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}
