/**
 * The session log of PgSessionStore: one row per line in `session_log`
 * (migrations/pg/030_sessions.sql), the line's JSON text exactly as the file's line would be.
 * A line is inserted in the transaction that stores its messages (pg-store.ts): the database's
 * sequence numbers it, so `seq` only grows, whichever process writes. The messages themselves
 * are durable in their rows; the log is what derives from a turn (note lines, index rows) is
 * rebuilt from after a crash, as in the embedded mode (store.ts).
 *
 * Each line carries its owner (`run`): in a cluster the id of the process that wrote it
 * (registered in `cluster_processes`, issue 36), else a random id per store. At start a process
 * takes the lines whose owner is not alive — no process of that id with a heartbeat within the
 * lease time: a dead process's, a command-line tool's, a move's — and never a running process's,
 * whose derivations are still under way. It takes them in one statement that makes them its own
 * (row locks: two processes starting at once take each line once), so one that dies before it
 * rebuilt from them leaves them, under its own id, to the next start. A process forgets only
 * its own lines: like the file, at start and stop (`forget`, forced) and, while running, once
 * they pass a size and nothing deriving from them is under way.
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_LEASE_MS } from '../../config/database.js';
import type { Database, Sql } from '../../storage/pg/database.js';
import { ownerAlive } from '../../storage/pg/owner.js';
import { redactJsonLines, type Redaction } from '../../storage/redaction.js';
import type { Chat } from '../../core/chat.js';
import type { SessionMessage } from '../model.js';
import type { WalLine } from '../store.js';
import { Holds, parseLogLine } from '../wal.js';

/** The `run` of the lines a move from files brought (tables.ts). */
export const MOVED = 'moved';

/** Forget this process's lines once they are this big and nothing derives from them (the file's size). */
const FORGET_BYTES = 1_000_000;

/**
 * Inserts one line, numbered by the sequence; `$4` is the line's JSON without its `seq`, which is
 * put first as the file's line has it. Used inside pg-store.ts's write (a CTE of its statement).
 */
export const INSERT_LINE = `INSERT INTO session_log (seq, channel, chat_id, run, line)
  SELECT s, $2, $3, $9, '{"seq":' || s || ',' || substr($10::text, 2) FROM nextval('session_log_seq') AS s
  WHERE $10::text IS NOT NULL RETURNING seq`;

/** A line's text without its seq (the rest of what the file's line holds, in its order). */
export function lineWithoutSeq(session: { channelType: string; chatId: string; metadata: { conversationId: string } }, messages: SessionMessage[]): string {
  return JSON.stringify({ channelType: session.channelType, chatId: session.chatId, conversation: session.metadata.conversationId, messages });
}

/**
 * Takes the lines no live process owns ($1: this store's run, $2: the lease ms): made this
 * store's, returned with their owner before. FOR UPDATE: a second start waits on the lines the
 * first is taking, then finds them owned by a live process and leaves them.
 */
const TAKE_LINES = `WITH free AS (
    SELECT seq, run FROM session_log l
     WHERE run <> $1 AND NOT ${ownerAlive('l.run', '$2')}
     FOR UPDATE
  )
  UPDATE session_log l SET run = $1 FROM free WHERE l.seq = free.seq RETURNING l.seq, l.line, free.run AS was`;

/**
 * Takes run one after another (pg_advisory_xact_lock; any constant no other code uses): the
 * statement's snapshot then always sees the previous taker's lines and its registration, which
 * a take begun while another ran might predate (the row lock's recheck keeps that snapshot).
 */
const TAKE_LOCK = '7883230862291336';

export interface PgSessionLogOptions {
  /** The owner of this store's lines: in a cluster the process's id (default a random one). */
  run?: string;
  /** CLUSTER_LEASE_MS: a process whose last heartbeat is older is dead, its lines free to take. */
  leaseMs?: number;
}

export class PgSessionLog {
  /** This store's lines: those it writes and those it took at start; the only ones it forgets. */
  readonly run: string;
  private readonly leaseMs: number;
  private lastRun: WalLine[] = [];
  /** Bytes of lines written since the last forget. */
  private written = 0;
  private readonly holds = new Holds();
  beforeForget: (() => Promise<void>) | undefined;
  forgettable: () => boolean = () => true;

  constructor(
    private readonly db: Database,
    opts: PgSessionLogOptions = {},
  ) {
    this.run = opts.run ?? randomBytes(8).toString('hex');
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  }

  /** Takes the lines no live process owns (see the top of this file), oldest first (for takeLastRun). */
  async read(): Promise<void> {
    const rows = await this.db.tx(async (sql) => {
      await sql.query('SELECT pg_advisory_xact_lock($1::bigint)', [TAKE_LOCK]);
      return (await sql.query<{ seq: string; line: string; was: string }>(TAKE_LINES, [this.run, this.leaseMs])).rows;
    });
    rows.sort((a, b) => Number(a.seq) - Number(b.seq));
    const lines: WalLine[] = [];
    for (const r of rows) {
      const line = parseLogLine(r.line);
      if (!line || 'base' in line) continue;
      lines.push(line);
      if (r.was === MOVED) this.moved.push(line);
    }
    this.lastRun.push(...lines);
  }

  /**
   * Lines a move from files brought, read at start: the file's log may hold messages its session
   * file lacks (a crash before the checkpoint), which the store applies to the sessions then.
   * Lines this store wrote are in their sessions' rows already (the same transaction).
   */
  readonly moved: WalLine[] = [];

  take(): WalLine[] {
    return this.lastRun.splice(0);
  }

  /** Keeps the lines until the returned release is called (once). */
  hold(): () => void {
    return this.holds.hold();
  }

  /** A line of `bytes` was committed: past the size, with nothing deriving from the lines, they are forgotten in the background. */
  wrote(bytes: number): void {
    this.written += bytes;
    if (this.written > FORGET_BYTES && this.holds.count === 0) void this.forget(false).catch(() => undefined);
  }

  /**
   * Makes what derives from the lines durable (`beforeForget`; it throws: the lines are kept),
   * then deletes this store's lines (written or taken at start); unless forced, only while
   * nothing derives from them and the lines are past the size.
   */
  async forget(force: boolean): Promise<void> {
    await this.beforeForget?.();
    if (!force && (this.holds.count > 0 || !this.forgettable() || this.written <= FORGET_BYTES)) return;
    this.written = 0;
    await this.db.query('DELETE FROM session_log WHERE run = $1', [this.run]);
  }

  /** The words out of the chat's lines, in one transaction; how many lines changed. */
  redact(chat: Chat, words: Redaction): Promise<number> {
    return this.db.tx(async (sql) => {
      const { rows } = await sql.query<{ seq: string; line: string }>(
        'SELECT seq, line FROM session_log WHERE channel = $1 AND chat_id = $2 ORDER BY seq FOR UPDATE',
        [chat.channel, chat.chatId],
      );
      let changed = 0;
      for (const r of rows) {
        if (!words.test(r.line)) continue;
        const next = redactJsonLines(r.line, words);
        if (next === r.line) continue;
        // A torn line that held the words goes whole (redactJsonLines drops it).
        if (next === '') await sql.query('DELETE FROM session_log WHERE seq = $1', [r.seq]);
        else await sql.query('UPDATE session_log SET line = $2 WHERE seq = $1', [r.seq, next]);
        changed++;
      }
      return changed;
    });
  }

  /** Deletes the chats' lines (purge); how many. */
  async erase(sql: Sql, chats: Chat[]): Promise<number> {
    const { rowCount } = await sql.query(
      'DELETE FROM session_log l USING unnest($1::text[], $2::text[]) AS c(channel, chat_id) WHERE l.channel = c.channel AND l.chat_id = c.chat_id',
      [chats.map((c) => c.channel), chats.map((c) => c.chatId)],
    );
    return rowCount;
  }
}
