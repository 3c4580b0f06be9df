/**
 * The sessions store: one session per chat (`channel:chatId`) — its messages and metadata — and
 * the session log, the one durable record of a turn, which what derives from a turn (daily-note
 * lines, index rows) is rebuilt from after a crash. Callers see only this interface; one
 * implementation keeps a JSON file per chat and an append-only log beside them (file-store.ts,
 * wal.ts), the other rows in PostgreSQL (pg-store.ts). What any implementation must do is stated
 * as tests: test/sessions/store.contract.ts.
 *
 * Messages change only through a `SessionWriter` (writer.ts): a change it reports done is
 * durable — a kill right after loses none of it, and a replay never brings back what `/new` or
 * a compaction removed. Sessions are read lazily and cached: while a session is in memory,
 * every caller gets the same object.
 */
import type { Chat } from '../core/chat.js';
import type { Session, SessionMessage } from './model.js';
import type { SessionWriter } from './writer.js';
import type { ChatNames } from './names.js';
import type { Redaction } from '../storage/redaction.js';
import type { Footprint } from '../storage/footprint.js';

/** One line of the session log: messages of one session, logged together. */
export interface WalLine {
  /** Only grows, across restarts: a session holds every line up to its `walSeq`. */
  seq: number;
  channelType: string;
  chatId: string;
  /** The conversation (metadata.conversationId) the messages belong to: what their index rows carry. */
  conversation?: string;
  messages: SessionMessage[];
}

/** What derives from the session log's lines (daily notes, index rows), as the log needs to know it. */
export interface DerivedFromLog {
  /** Makes what was derived durable; the log forgets its lines only after it resolves (it throws: the log is kept). */
  flush: () => Promise<void>;
  /** False while something derived since the last flush is not yet durable. */
  durable: () => boolean;
}

export interface SessionStore {
  /** Before anything else: applies what an earlier run left in the log (a crash) to its sessions. */
  init(): Promise<void>;
  /** The chat's session: read once, then the same object; a chat never seen gets an empty one. */
  getOrCreate(channelType: string, chatId: string): Promise<Session>;
  /** The one way to change a session's messages and metadata (writer.ts). */
  writer(session: Session): SessionWriter;
  /** The chats' names as the channels give them (names.ts). */
  readonly names: ChatNames;
  /**
   * The log lines the last run left at `init` (what a crash may have kept from the notes and
   * the index), oldest first: taken once. The log keeps them until `forgetLog`.
   */
  takeLastRun(): WalLine[];
  /**
   * Several processes on one database (docs/cluster.md): while running, takes the lines of
   * processes that died since the start as `init` took those left before it, oldest first —
   * what derives from them is the caller's to write again. Files have one process: not there.
   */
  takeOrphaned?(): Promise<WalLine[]>;
  /** Empties the session log once what derives from its lines is written (start, stop); rejects (and keeps it) when `flush` does. */
  forgetLog(): Promise<void>;
  /**
   * Several processes on one database (docs/cluster.md): the chat's session may have been
   * changed by another process since it was read here, so an idle copy held here is dropped and
   * read again at its next use. Files have one process: not there.
   */
  reread?(channelType: string, chatId: string): void;
  /**
   * Several processes: the chat went to another process mid-turn, and what this one recorded of
   * it and did not commit is not to be saved — its copy of the session goes, owed messages and
   * all, and is read again at its next use. Files have one process: not there.
   */
  discard?(channelType: string, chatId: string): void;
  /** Tells the log what derives from its lines (given once, at build). */
  deriveFromLog(derived: DerivedFromLog): void;
  /**
   * Takes the words out of what the store keeps of a chat besides its session's messages (which
   * change through the writer): its lines of the session log, and any copy of its session set
   * aside as damaged — in order with the log's appends (/forget). Returns what changed, one
   * name each (e.g. a file), for the forget's count; [] when nothing held the words.
   */
  redact(channelType: string, chatId: string, words: Redaction): Promise<string[]>;
  /** The chats with a session kept (the memory page's list), in no order. */
  chats(): Promise<Chat[]>;
  /**
   * Every chat the store keeps anything of — a session, a copy set aside as damaged, a line of
   * the log — in no order: where purge looks for a group's topics. Also before `init`.
   */
  traces(): Promise<Chat[]>;
  /** How much the store keeps of the chat's session and when it last changed (the memory page's list). */
  footprint(channelType: string, chatId: string): Promise<Footprint>;
  /**
   * Deletes everything of these chats but their names (`names.erase`): sessions, copies set
   * aside, lines of the log. Also before `init`; nothing else may use the store meanwhile
   * (purge runs with the daemon stopped). One line per thing deleted, for purge's report.
   */
  erase(chats: Chat[]): Promise<string[]>;
  /** Waits for every write started so far, background ones included (shutdown, tests). */
  flush(): Promise<void>;
  /** Flushes, then lets go of what it holds open (shutdown). */
  close(): Promise<void>;
}
