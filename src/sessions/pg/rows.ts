/**
 * A session as PgSessionStore keeps it in `sessions` and `session_messages`
 * (migrations/pg/030_sessions.sql), read and written: the JSON text a session file would hold is
 * what both forms give back, so a move between files and PostgreSQL keeps sessions byte for byte.
 */
import type { Sql } from '../../storage/pg/database.js';
import { chatKey, type Chat } from '../../core/chat.js';
import type { Session } from '../model.js';
import { INSERT_LINE } from './log.js';

/** A session's row with its messages' rows, as one statement reads it (one snapshot). */
export interface StoredSession {
  head: string | null;
  text: Buffer | null;
  wal_seq: string | null;
  bodies: string[];
}

export const READ_SESSION = `SELECT head, text, wal_seq, ARRAY(SELECT body FROM session_messages m WHERE m.chat = s.chat ORDER BY pos) AS bodies
  FROM sessions s WHERE chat = $1`;

/** The session's JSON without its messages' contents: `messages` stays in its place, empty; `walSeq` is a column. */
export function headOf(session: Session): string {
  return JSON.stringify({ ...session, messages: [], walSeq: undefined });
}

/** The session as its file would hold it: the text a move brought, or head and rows put together as the file store writes them. */
export function fileTextOf(row: StoredSession): string {
  if (row.text !== null) return row.text.toString('utf8');
  return JSON.stringify(sessionObjectOf(row), null, 1);
}

/** What is kept of a session that cannot be read: its file text, or its head and rows as they are when they do not even parse. */
export function asideText(row: StoredSession): string {
  try {
    return fileTextOf(row);
  } catch {
    return JSON.stringify({ head: row.head, messages: row.bodies }, null, 1);
  }
}

/** Head and rows put together (a row in head form only). */
export function sessionObjectOf(row: StoredSession): Record<string, unknown> {
  const obj = JSON.parse(row.head!) as Record<string, unknown>;
  obj.messages = row.bodies.map((b) => JSON.parse(b) as unknown);
  if (row.wal_seq !== null) obj.walSeq = Number(row.wal_seq);
  return obj;
}

/**
 * Sets a session that cannot be read aside (the file's `*.corrupt-<time>`), in one transaction:
 * its text kept in `session_aside`, its rows deleted, so the chat starts afresh.
 */
export async function setAside(sql: Sql, chat: Chat, at: string, text: string): Promise<void> {
  const key = chatKey(chat);
  await sql.query('INSERT INTO session_aside (chat, channel, chat_id, at, text) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING', [
    key,
    chat.channel,
    chat.chatId,
    at,
    Buffer.from(text, 'utf8'),
  ]);
  await sql.query('DELETE FROM session_messages WHERE chat = $1', [key]);
  await sql.query('DELETE FROM sessions WHERE chat = $1', [key]);
}

/**
 * Stores what changed of a session in one statement: the new messages' rows from `$4`, the
 * revised ones' text, one line of the session log (when `$10` is given, see log.ts), and the
 * session's head; returns the session's newest log line. The rows were deleted first when
 * the session is written whole.
 */
export const WRITE_SESSION = `WITH added AS (
    INSERT INTO session_messages (chat, pos, body)
    SELECT $1, $4::integer + a.n::integer - 1, a.body FROM unnest($5::text[]) WITH ORDINALITY AS a(body, n)
  ), revised AS (
    UPDATE session_messages m SET body = r.body FROM unnest($6::integer[], $7::text[]) AS r(pos, body)
    WHERE m.chat = $1 AND m.pos = r.pos
  ), line AS (
    ${INSERT_LINE}
  )
  INSERT INTO sessions (chat, channel, chat_id, head, text, wal_seq, updated_at)
  VALUES ($1, $2, $3, $8, NULL, (SELECT seq FROM line), now())
  ON CONFLICT (chat) DO UPDATE SET head = EXCLUDED.head, text = NULL,
    wal_seq = coalesce(EXCLUDED.wal_seq, sessions.wal_seq), updated_at = now()
  RETURNING wal_seq`;
