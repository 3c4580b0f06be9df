/**
 * The session log of PgSessionStore: one row per line in `session_log`
 * (migrations/pg/030_sessions.sql), the line's JSON text exactly as the file's line would be.
 * A line is inserted in the transaction that stores its messages (pg-store.ts): the database's
 * sequence numbers it, so `seq` only grows, whichever process writes. The messages themselves
 * are durable in their rows; the log is what derives from a turn (note lines, index rows) is
 * rebuilt from after a crash, as in the embedded mode (store.ts).
 *
 * What this process forgets: the lines it read at its start and the lines it wrote (its `run`),
 * never a line another process wrote since (several processes: issue 36). Like the file, the
 * log is emptied at start and stop (`forget`, forced) and, while running, once its lines pass
 * a size and nothing deriving from them is under way.
 */
import { randomBytes } from 'node:crypto';
import type { Database, Sql } from '../../storage/pg/database.js';
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

export class PgSessionLog {
  /** This process's lines: what it forgets besides those it read at start. */
  readonly run = randomBytes(8).toString('hex');
  /** The newest line read at start. */
  private readUpTo = 0;
  private lastRun: WalLine[] = [];
  /** Bytes of lines written since the last forget. */
  private written = 0;
  private readonly holds = new Holds();
  beforeForget: (() => Promise<void>) | undefined;
  forgettable: () => boolean = () => true;

  constructor(private readonly db: Database) {}

  /** Reads the lines an earlier run left, oldest first (for takeLastRun). */
  async read(): Promise<void> {
    const { rows } = await this.db.query<{ seq: string; line: string; run: string }>('SELECT seq, line, run FROM session_log ORDER BY seq');
    const lines: WalLine[] = [];
    for (const r of rows) {
      this.readUpTo = Math.max(this.readUpTo, Number(r.seq));
      const line = parseLogLine(r.line);
      if (!line || 'base' in line) continue;
      lines.push(line);
      if (r.run === MOVED) this.moved.push(line);
    }
    this.lastRun = lines;
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
   * then deletes this process's lines and those read at start; unless forced, only while
   * nothing derives from them and the lines are past the size.
   */
  async forget(force: boolean): Promise<void> {
    await this.beforeForget?.();
    if (!force && (this.holds.count > 0 || !this.forgettable() || this.written <= FORGET_BYTES)) return;
    this.written = 0;
    await this.db.query('DELETE FROM session_log WHERE run = $1 OR seq <= $2', [this.run, this.readUpTo]);
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
