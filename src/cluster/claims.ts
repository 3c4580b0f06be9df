/**
 * Which process runs a chat's messages, when several share one intake journal (PgInbox, the
 * `inbox` table): a chat is *claimed* by one process at a time (`inbox_claims`, migration 070),
 * which runs its open entries one after another, in the order they were accepted, and renews the
 * claim while it works. So a chat's turns never run in two processes at once, and its messages
 * keep their order whichever process accepted them.
 *
 * - `claimWork` takes what nobody runs: chats with open entries and no claim, chats whose claim
 *   expired (its process died: every open entry of the chat comes back, `takenOver`, to be run
 *   under the recovery rules a restart applies — attempts counted, the tool call it died in
 *   named in `interrupted`), and entries accepted since for chats this process holds.
 * - `renew` (the registry's heartbeat) extends every claim this process holds; a claim another
 *   took (this process was cut off past the lease time) is reported lost.
 * - `release` lets a chat go once this process's queue of it is empty — unless an entry arrived
 *   meanwhile (`more`: the caller takes it with `claimWork(chat)`), decided in one statement, so
 *   an entry accepted by another process at that moment is never left without a claimant.
 *
 * Rows are locked as they are taken (`FOR UPDATE`; `SKIP LOCKED` for expired claims two
 * processes may reach for at once), and expiry is the database's clock, never a machine's.
 * Locally, as for leases (leases.ts), a claim counts as held only until `leaseMs` after the
 * statement that took or renewed it was sent: before the database lets another take it.
 */
import type { Database, Sql } from '../storage/pg/database.js';
import { ENTRY_COLUMNS, journalEntryOf, type EntryRow } from '../queue/inbox-pg.js';
import type { InboxEntry } from '../queue/inbox.js';

export interface Chat {
  channel: string;
  chatId: string;
}

export interface ClaimedEntry extends InboxEntry {
  chat: Chat;
  /** Its place in the journal: a chat's entries are handled in this order. */
  seq: number;
  /** Its chat was another process's, which stopped renewing the claim (it died): handle it as a recovered entry. */
  takenOver: boolean;
}

export interface ClaimOptions {
  /** Only this chat (after `release` said `more`, or for a message just accepted). */
  chat?: Chat | undefined;
  /** New chats (unclaimed or taken over) this call takes at most; default no limit. */
  maxNewChats?: number | undefined;
  /** Chats left alone: those whose entries this process is running (their own loop takes what arrives for them). */
  exclude?: Chat[] | undefined;
}

type ClaimRow = { channel: string; chat_id: string; owner: string; through: string };

const keyOf = (c: Chat) => JSON.stringify([c.channel, c.chatId]);

export class ChatClaims {
  /** Per chat held (keyOf), until when (this process's monotonic clock) it counts as held. */
  private readonly until = new Map<string, { chat: Chat; until: number }>();

  constructor(
    private readonly db: Database,
    /** The process's id (registry.ts). */
    readonly owner: string,
    readonly leaseMs: number,
    private readonly clock: () => number = () => performance.now(),
    /** Only this channel's chats: a process answers through its own channel (a terminal process never takes Telegram's chats). Unset: every channel's. */
    readonly channel?: string,
  ) {}

  /** Claims what nobody runs and takes the entries waiting in the chats it holds; they come oldest first. */
  async claimWork(opts: ClaimOptions = {}): Promise<ClaimedEntry[]> {
    const sent = this.clock();
    const chat = opts.chat ? [opts.chat.channel, opts.chat.chatId] : [null, null];
    const ex = opts.exclude ?? [];
    const exclude = [ex.map((c) => c.channel), ex.map((c) => c.chatId)];
    // This chat only (when given), and none of the excluded ones.
    const only = (n: number) =>
      `($${n}::text IS NULL OR (c.channel = $${n} AND c.chat_id = $${n + 1}))
       AND NOT EXISTS (SELECT 1 FROM unnest($${n + 2}::text[], $${n + 3}::text[]) AS e(channel, chat_id) WHERE e.channel = c.channel AND e.chat_id = c.chat_id)
       AND ($${n + 4}::text IS NULL OR c.channel = $${n + 4})`;
    const channel = this.channel ?? null;
    const open = 'EXISTS (SELECT 1 FROM inbox i WHERE i.channel = c.channel AND i.chat_id = c.chat_id AND i.done_at IS NULL)';
    const { held, entries } = await this.db.tx(async (sql) => {
      let room = opts.maxNewChats ?? Number.MAX_SAFE_INTEGER;
      // Expired claims, whoever held them: the ones with open entries are taken over, the others deleted.
      const { rows: expired } = await sql.query<ClaimRow & { open: boolean }>(
        `SELECT c.channel, c.chat_id, c.owner, c.through, ${open} AS open FROM inbox_claims c
          WHERE c.expires_at <= now() AND ${only(1)} ORDER BY c.expires_at FOR UPDATE SKIP LOCKED`,
        [...chat, ...exclude, channel],
      );
      const gone = expired.filter((r) => !r.open);
      if (gone.length > 0) await deleteClaims(sql, gone);
      const taken = expired.filter((r) => r.open && (r.owner === this.owner || room-- > 0));
      // A dead process's entries come back whole (through 0): what it took, it did not finish.
      const reset: ClaimRow[] = taken.filter((r) => r.owner !== this.owner);
      // Chats with open entries and no claim: nobody runs them. Oldest waiting first.
      const { rows: fresh } =
        room <= 0
          ? { rows: [] as ClaimRow[] }
          : await sql.query<ClaimRow>(
              `INSERT INTO inbox_claims (channel, chat_id, owner, expires_at)
               SELECT c.channel, c.chat_id, $1, now() FROM
                 (SELECT channel, chat_id, min(seq) AS first FROM inbox WHERE done_at IS NULL GROUP BY channel, chat_id) c
                WHERE ${only(2)} AND NOT EXISTS (SELECT 1 FROM inbox_claims x WHERE x.channel = c.channel AND x.chat_id = c.chat_id)
                ORDER BY c.first LIMIT $7
               ON CONFLICT DO NOTHING
               RETURNING channel, chat_id, owner, through`,
              [this.owner, ...chat, ...exclude, channel, Math.min(room, 1_000_000)],
            );
      // Its own live claims: only this process changes them, so waiting for their lock is safe.
      const { rows: mine } = await sql.query<ClaimRow>(
        `SELECT c.channel, c.chat_id, c.owner, c.through FROM inbox_claims c
          WHERE c.owner = $1 AND c.expires_at > now() AND ${only(2)} FOR UPDATE`,
        [this.owner, ...chat, ...exclude, channel],
      );
      const all = [...taken, ...fresh, ...mine].map((r) => ({
        channel: r.channel,
        chat_id: r.chat_id,
        through: reset.includes(r) ? 0 : Number(r.through),
        takenOver: reset.includes(r),
      }));
      if (all.length === 0) return { held: [], entries: [] };
      const { rows } = await sql.query<EntryRow & { seq: string; channel: string; chat_id: string }>(
        `SELECT ${ENTRY_COLUMNS}, seq, inbox.channel, inbox.chat_id FROM inbox
           JOIN unnest($1::text[], $2::text[], $3::bigint[]) AS c(channel, chat_id, through)
             ON inbox.channel = c.channel AND inbox.chat_id = c.chat_id AND inbox.seq > c.through
          WHERE inbox.done_at IS NULL ORDER BY seq`,
        [all.map((c) => c.channel), all.map((c) => c.chat_id), all.map((c) => c.through)],
      );
      const last = new Map<string, number>();
      for (const r of rows) last.set(keyOf({ channel: r.channel, chatId: r.chat_id }), Number(r.seq));
      await sql.query(
        `UPDATE inbox_claims SET owner = $1, expires_at = now() + $2 * interval '1 millisecond', through = c.through
           FROM unnest($3::text[], $4::text[], $5::bigint[]) AS c(channel, chat_id, through)
          WHERE inbox_claims.channel = c.channel AND inbox_claims.chat_id = c.chat_id`,
        [
          this.owner,
          this.leaseMs,
          all.map((c) => c.channel),
          all.map((c) => c.chat_id),
          all.map((c) => last.get(keyOf({ channel: c.channel, chatId: c.chat_id })) ?? c.through),
        ],
      );
      const over = new Set(all.filter((c) => c.takenOver).map((c) => keyOf({ channel: c.channel, chatId: c.chat_id })));
      const entries = rows.map((r): ClaimedEntry => {
        const e = journalEntryOf(r);
        const chat = { channel: r.channel, chatId: r.chat_id };
        return {
          id: e.id,
          msg: e.msg,
          attempt: e.starts,
          interrupted: e.interrupted,
          completed: e.completed,
          chat,
          seq: Number(r.seq),
          takenOver: over.has(keyOf(chat)),
        };
      });
      return { held: all.map((c) => ({ channel: c.channel, chatId: c.chat_id })), entries };
    });
    for (const c of held) this.until.set(keyOf(c), { chat: c, until: sent + this.leaseMs });
    return entries;
  }

  /**
   * Extends every claim this process holds (the heartbeat). Only a takeover changes a claim's
   * owner, so one still this process's was run by nobody else, even if it had expired. Returns
   * the chats another process took: their turns must stop here.
   */
  async renew(): Promise<Chat[]> {
    if (this.until.size === 0) return [];
    const sent = this.clock();
    // Judged against what was held when the statement went out: a chat taken or let go while it
    // ran (claimWork, release) is not in its answer, and is not lost for that.
    const asked = new Map(this.until);
    const { rows } = await this.db.query<{ channel: string; chat_id: string }>(
      `UPDATE inbox_claims SET expires_at = now() + $2 * interval '1 millisecond' WHERE owner = $1 RETURNING channel, chat_id`,
      [this.owner, this.leaseMs],
    );
    const kept = new Set(rows.map((r) => keyOf({ channel: r.channel, chatId: r.chat_id })));
    const lost: Chat[] = [];
    for (const [key, held] of asked) {
      if (this.until.get(key) !== held) continue;
      if (kept.has(key)) held.until = sent + this.leaseMs;
      else {
        this.until.delete(key);
        lost.push(held.chat);
      }
    }
    return lost;
  }

  /**
   * Lets a chat go, its queue here being empty: `released`; `more` when entries arrived since
   * this process last took the chat's (it keeps the claim: take them with `claimWork({ chat })`);
   * `lost` when the claim is not this process's any more.
   */
  async release(chat: Chat): Promise<'released' | 'more' | 'lost'> {
    const { rows } = await this.db.query<{ released: boolean }>(
      `WITH gone AS (
         DELETE FROM inbox_claims c WHERE c.channel = $2 AND c.chat_id = $3 AND c.owner = $1
            AND NOT EXISTS (SELECT 1 FROM inbox i WHERE i.channel = c.channel AND i.chat_id = c.chat_id AND i.done_at IS NULL AND i.seq > c.through)
         RETURNING 1)
       SELECT EXISTS (SELECT 1 FROM gone) AS released,
              EXISTS (SELECT 1 FROM inbox_claims WHERE channel = $2 AND chat_id = $3 AND owner = $1) AS mine`,
      [this.owner, chat.channel, chat.chatId],
    );
    const r = rows[0] as { released: boolean; mine: boolean };
    if (r.released || !r.mine) this.until.delete(keyOf(chat));
    return r.released ? 'released' : r.mine ? 'more' : 'lost';
  }

  /**
   * Takes a chat for work that is not a journal entry (a reminder's delivery writes the chat's
   * session): when no live process holds it and no dead one left entries in it (those are
   * `claimWork`'s to take over, under the recovery rules), or it is this process's already. An
   * entry accepted meanwhile is this holder's to run (`release` says `more`). False: another
   * process has the chat — ask again later.
   */
  async hold(chat: Chat): Promise<boolean> {
    const sent = this.clock();
    const { rowCount } = await this.db.query(
      `INSERT INTO inbox_claims (channel, chat_id, owner, expires_at) VALUES ($2, $3, $1, now() + $4 * interval '1 millisecond')
       ON CONFLICT (channel, chat_id) DO UPDATE SET owner = $1, expires_at = EXCLUDED.expires_at,
         through = CASE WHEN inbox_claims.owner = $1 THEN inbox_claims.through ELSE 0 END
        WHERE inbox_claims.owner = $1 OR (inbox_claims.expires_at <= now()
          AND NOT EXISTS (SELECT 1 FROM inbox i WHERE i.channel = $2 AND i.chat_id = $3 AND i.done_at IS NULL))`,
      [this.owner, chat.channel, chat.chatId, this.leaseMs],
    );
    if (rowCount > 0) this.until.set(keyOf(chat), { chat, until: sent + this.leaseMs });
    return rowCount > 0;
  }

  /** Held now, as far as this process can be sure. */
  holds(chat: Chat): boolean {
    const held = this.until.get(keyOf(chat));
    return held !== undefined && this.clock() < held.until;
  }

  /** Open journal entries of `channel`'s chats, whoever accepted or runs them (a piped terminal ends once there are none). */
  async openIn(channel: string): Promise<number> {
    const { rows } = await this.db.query<{ n: string }>('SELECT count(*) AS n FROM inbox WHERE channel = $1 AND done_at IS NULL', [channel]);
    return Number(rows[0]?.n ?? 0);
  }

  /** The process whose live claim the chat is under (by the database's clock), if any: where its /stop goes. */
  async holder(chat: Chat): Promise<string | undefined> {
    const { rows } = await this.db.query<{ owner: string }>('SELECT owner FROM inbox_claims WHERE channel = $1 AND chat_id = $2 AND expires_at > now()', [
      chat.channel,
      chat.chatId,
    ]);
    return rows[0]?.owner;
  }
}

function deleteClaims(sql: Sql, rows: ClaimRow[]): Promise<unknown> {
  return sql.query(
    'DELETE FROM inbox_claims USING unnest($1::text[], $2::text[]) AS c(channel, chat_id) WHERE inbox_claims.channel = c.channel AND inbox_claims.chat_id = c.chat_id',
    [rows.map((r) => r.channel), rows.map((r) => r.chat_id)],
  );
}

/** How many chats each process holds (live claims), for /status and doctor. */
export async function claimsByOwner(db: Pick<Database, 'query'>): Promise<Map<string, number>> {
  const { rows } = await db.query<{ owner: string; n: string }>('SELECT owner, count(*) AS n FROM inbox_claims WHERE expires_at > now() GROUP BY owner');
  return new Map(rows.map((r) => [r.owner, Number(r.n)]));
}
