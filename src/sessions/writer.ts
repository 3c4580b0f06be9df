/**
 * The one owner of a turn's writes to its session (`SessionStore.writer`). A turn, a command, a
 * compaction, a reminder: whoever changes a session's messages does it through one of these,
 * so the store's protocol — record → commit → checkpoint — is kept by the store, not by callers:
 *
 *   record   adds a message in memory only, owed to the log: for words already durable
 *            elsewhere (the user's message is in the inbox journal), so a turn's messages reach
 *            the disk in one write with its answer;
 *   commit   makes everything owed durable: one fsynced line in the session log (wal.ts); the
 *            session file is rewritten in the background (a checkpoint);
 *   append   record + commit;
 *   replace  sets the messages (compaction, forget) and rewrites the file now; a message
 *            dropped is no longer owed, so the next log line cannot bring it back;
 *   clear    /new: no messages and a new conversation id, written now;
 *   setModel /model: the chat's model (undefined: back to LLM_MODEL), written now.
 */
import type { Session, SessionMessage } from './model.js';

export interface SessionWriter {
  readonly session: Session;
  record(message: SessionMessage): void;
  /** Makes what was recorded durable; nothing to do when nothing is owed. */
  commit(): Promise<void>;
  append(message: SessionMessage): Promise<void>;
  replace(messages: SessionMessage[]): Promise<void>;
  clear(): Promise<void>;
  setModel(model: string | undefined): Promise<void>;
}
