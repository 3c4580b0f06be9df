/**
 * What PgSessionStore does over all its tables (migrations/pg/030_sessions.sql): the lists of
 * chats, purge's erase, /forget's redaction of sessions set aside, and the move between files
 * and PostgreSQL (storage/portable.ts, items: ../portable.ts). A moved session keeps its file's
 * text until its first change; `dump` gives a session in rows as the file store writes it.
 */
import type { Database, Sql } from '../../storage/pg/database.js';
import type { Redaction } from '../../storage/redaction.js';
import { chatKey, type Chat } from '../../core/chat.js';
import { asideAt, logLineOf, walSeqOf, type SessionItem } from '../portable.js';
import { READ_SESSION, fileTextOf, type StoredSession } from './rows.js';
import { MOVED } from './log.js';

/** Rows per INSERT when a move loads items. */
const BATCH = 200;

export class PgSessionTables {
  constructor(private readonly db: Database) {}

  /** The chats a `SELECT channel, chat_id …` names. */
  async chats(select: string): Promise<Chat[]> {
    const { rows } = await this.db.query<{ channel: string; chat_id: string }>(select);
    return rows.map((r) => ({ channel: r.channel, chatId: r.chat_id }));
  }

  /** The words out of the chat's sessions set aside, in one transaction; how many changed. */
  redactAside(chat: Chat, words: Redaction): Promise<number> {
    return this.db.tx(async (sql) => {
      const { rows } = await sql.query<{ at: string; text: Buffer }>('SELECT at, text FROM session_aside WHERE chat = $1 FOR UPDATE', [chatKey(chat)]);
      let changed = 0;
      for (const r of rows) {
        const text = r.text.toString('utf8');
        if (!words.test(text)) continue;
        const next = words.redact(text);
        if (next === text) continue;
        await sql.query('UPDATE session_aside SET text = $3 WHERE chat = $1 AND at = $2', [chatKey(chat), r.at, Buffer.from(next, 'utf8')]);
        changed++;
      }
      return changed;
    });
  }

  /** Deletes everything of the chats (their log lines through `lines`) in one transaction; one line per kind of thing deleted. */
  erase(chats: Chat[], lines: (sql: Sql) => Promise<number>): Promise<string[]> {
    const keys = chats.map((c) => chatKey(c));
    return this.db.tx(async (sql) => {
      const out: string[] = [];
      const sessions = await sql.query<{ chat: string }>('DELETE FROM sessions WHERE chat = ANY($1::text[]) RETURNING chat', [keys]);
      await sql.query('DELETE FROM session_messages WHERE chat = ANY($1::text[])', [keys]);
      for (const r of sessions.rows) out.push(`session ${r.chat} (sessions table)`);
      const aside = await sql.query('DELETE FROM session_aside WHERE chat = ANY($1::text[])', [keys]);
      if (aside.rowCount > 0) out.push(`${aside.rowCount} session(s) set aside as damaged (session_aside table)`);
      const logged = await lines(sql);
      if (logged > 0) out.push(`${logged} line(s) of the session log (session_log table)`);
      return out;
    });
  }

  /** Every session (in chat order), every one set aside, every log line (oldest first). */
  async *dump(): AsyncIterable<SessionItem> {
    const { rows: chats } = await this.db.query<{ chat: string; channel: string; chat_id: string }>(
      'SELECT chat, channel, chat_id FROM sessions ORDER BY chat',
    );
    for (const c of chats) {
      const { rows } = await this.db.query<StoredSession & Record<string, unknown>>(READ_SESSION, [c.chat]);
      if (rows[0]) yield { kind: 'session', channel: c.channel, chatId: c.chat_id, text: fileTextOf(rows[0]) };
    }
    const aside = await this.db.query<{ channel: string; chat_id: string; at: string; text: Buffer }>(
      'SELECT channel, chat_id, at, text FROM session_aside ORDER BY chat, at',
    );
    for (const r of aside.rows) yield { kind: 'damaged', channel: r.channel, chatId: r.chat_id, at: r.at, text: r.text.toString('utf8') };
    const lines = await this.db.query<{ channel: string; chat_id: string; line: string }>('SELECT channel, chat_id, line FROM session_log ORDER BY seq');
    for (const r of lines.rows) yield { kind: 'log', channel: r.channel, chatId: r.chat_id, text: r.line };
  }

  /**
   * Adds the items: sessions in their file's text (read when first asked for), log lines under
   * their own numbers; the sequence then goes on above every number a session or line holds.
   */
  async load(items: AsyncIterable<SessionItem>): Promise<number> {
    let count = 0;
    let batch: SessionItem[] = [];
    let top = 0;
    const insert = async () => {
      const rows = batch;
      batch = [];
      if (rows.length > 0) await this.db.tx((sql) => insertItems(sql, rows));
    };
    for await (const item of items) {
      if (item.kind === 'session') top = Math.max(top, walSeqOf(item.text));
      if (item.kind === 'log') top = Math.max(top, logLineOf(item)?.seq ?? 0);
      batch.push(item);
      count++;
      if (batch.length >= BATCH) await insert();
    }
    await insert();
    if (top > 0) await this.db.query("SELECT setval('session_log_seq', greatest($1::bigint, (SELECT last_value FROM session_log_seq)))", [top]);
    return count;
  }

  async isEmpty(): Promise<boolean> {
    const { rows } = await this.db.query<{ empty: boolean }>(
      `SELECT NOT (EXISTS (SELECT 1 FROM sessions) OR EXISTS (SELECT 1 FROM session_aside) OR EXISTS (SELECT 1 FROM session_log)) AS empty`,
    );
    return rows[0]!.empty;
  }

  async clear(): Promise<void> {
    await this.db.tx(async (sql) => {
      for (const table of ['session_messages', 'sessions', 'session_aside', 'session_log']) await sql.query(`DELETE FROM ${table}`);
    });
  }
}

/** One batch of a move's items. A log line that is no line of the log (torn) is not kept, as the file's reader skips it. */
async function insertItems(sql: Sql, items: SessionItem[]): Promise<void> {
  for (const item of items) {
    const key = chatKey(item);
    if (item.kind === 'session') {
      await sql.query('INSERT INTO sessions (chat, channel, chat_id, text) VALUES ($1, $2, $3, $4)', [
        key,
        item.channel,
        item.chatId,
        Buffer.from(item.text, 'utf8'),
      ]);
    } else if (item.kind === 'damaged') {
      await sql.query('INSERT INTO session_aside (chat, channel, chat_id, at, text) VALUES ($1, $2, $3, $4, $5)', [
        key,
        item.channel,
        item.chatId,
        asideAt(item),
        Buffer.from(item.text, 'utf8'),
      ]);
    } else {
      const line = logLineOf(item);
      if (line)
        await sql.query('INSERT INTO session_log (seq, channel, chat_id, run, line) VALUES ($1, $2, $3, $4, $5)', [
          line.seq,
          item.channel,
          item.chatId,
          MOVED,
          item.text,
        ]);
    }
  }
}
