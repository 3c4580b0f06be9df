/**
 * The sessions store's items when the state moves between files and PostgreSQL
 * (storage/portable.ts): FileSessionStore and PgSessionStore give and take the same ones. A
 * session is its file's text exactly — so a move to PostgreSQL and back gives the same bytes —
 * a session set aside as damaged its text and when, a line of the session log its text; the
 * lines keep their numbers (each store's numbering goes on above them).
 */
import type { WalLine } from './store.js';
import { parseLogLine } from './wal.js';

export interface SessionItem {
  /** session: the session as its file holds it; damaged: one set aside (`*.corrupt-<at>`); log: a line of the session log. */
  kind: 'session' | 'damaged' | 'log';
  channel: string;
  chatId: string;
  /** The text exactly (a log line without its newline). */
  text: string;
  /** damaged: when it was set aside, as its file's name says (ms since the epoch). */
  at?: string;
}

/** The session log's line an item holds, or undefined when it holds none. */
export function logLineOf(item: SessionItem): WalLine | undefined {
  const line = item.kind === 'log' ? parseLogLine(item.text) : undefined;
  return line && !('base' in line) ? line : undefined;
}

/** The newest log line a session's text says it holds (`walSeq`), or 0. */
export function walSeqOf(text: string): number {
  try {
    const seq = (JSON.parse(text) as { walSeq?: unknown }).walSeq;
    return typeof seq === 'number' ? seq : 0;
  } catch {
    return 0;
  }
}

/** A damaged copy's time as a file name may hold it: digits only, so no name leaves its folder. */
export function asideAt(item: SessionItem): string {
  return item.at !== undefined && /^\d{1,20}$/.test(item.at) ? item.at : String(Date.now());
}
