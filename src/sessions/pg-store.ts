/**
 * PgSessionStore, the sessions store (store.ts) in PostgreSQL (migrations/pg/030_sessions.sql,
 * docs/postgres.md "Sessions"): a row per chat in `sessions` holding the session without its
 * messages, the messages as rows of `session_messages` in order, and the session log as rows of
 * `session_log` (pg/log.ts). The file twin is file-store.ts: the same contract
 * (test/sessions/store.contract.ts), the same writer protocol (writer.ts).
 *
 * A change the writer reports done is committed: a commit inserts the turn's new messages, its
 * log line and the session's head in one transaction — a turn never rewrites the session's
 * earlier messages. Only a compaction, /forget or /new (`replace`, `clear`) rewrites a chat's
 * rows, in one transaction; `/model` changes the head only. Writes of one session run one after
 * another, each taking what changed when it runs, so a burst of appends costs one transaction.
 *
 * Sessions are read lazily and cached, as the interface wants (every caller gets the same
 * object). The cache stays right because a chat is served by one process at a time: with several
 * processes (issue 36) a chat's messages go to the process that holds it, and another process
 * reads the chat's session only once it takes the chat over. This store does not decide that.
 *
 * A session moved in from files keeps its file's text (`sessions.text`) until its first change,
 * so a move back gives the same bytes; its text is read and checked like a file (repaired, or set
 * aside as damaged in `session_aside` when it cannot be read: a bad session never stops the bot).
 */
import type { Logger } from '../core/log.js';
import { AppError } from '../core/errors.js';
import { chatKey, type Chat } from '../core/chat.js';
import type { Database } from '../storage/pg/database.js';
import type { Redaction } from '../storage/redaction.js';
import type { Footprint } from '../storage/footprint.js';
import type { Portable } from '../storage/portable.js';
import { newSession, parseSession, type Session, type SessionMessage } from './model.js';
import { clearIn, replaceIn, setModelIn, type SessionWriter } from './writer.js';
import { SessionCache, type CachedSession } from './cache.js';
import type { PgChatNames } from './names-pg.js';
import type { DerivedFromLog, SessionStore, WalLine } from './store.js';
import { DEFAULT_MAX_CACHED, type SessionStoreOptions } from './file-store.js';
import { PgSessionLog, lineWithoutSeq, type PgSessionLogOptions } from './pg/log.js';
import { applyLines } from './wal.js';
import { READ_SESSION, WRITE_SESSION, asideText, headOf, sessionObjectOf, setAside, type StoredSession } from './pg/rows.js';
import { PgSessionTables } from './pg/tables.js';
import type { SessionItem } from './portable.js';

/** Everything the store keeps about one cached session. */
interface Entry extends CachedSession {
  /** session.messages[0, stored) are the chat's rows, as written. */
  stored: number;
  /** The rows are to be written whole: read from a moved file's text, repaired, replaced, cleared. */
  whole: boolean;
  /** Stored messages whose text changed since they were written (revise). */
  revised: Set<SessionMessage>;
}

/** The file store's options and who owns the log lines (pg/log.ts): in a cluster the process's id, and the lease time. */
export type PgSessionStoreOptions = SessionStoreOptions & PgSessionLogOptions;

export class PgSessionStore implements SessionStore, Portable<SessionItem> {
  readonly portableName = 'sessions';
  private readonly cache: SessionCache<Entry>;
  private readonly log: PgSessionLog;
  private readonly tables: PgSessionTables;

  constructor(
    private readonly db: Database,
    readonly names: PgChatNames,
    private readonly logger: Logger,
    opts: PgSessionStoreOptions = {},
  ) {
    this.cache = new SessionCache<Entry>({
      entry: () => ({ owed: [], stored: 0, whole: true, revised: new Set() }),
      maxCached: opts.maxCached ?? DEFAULT_MAX_CACHED,
      ...(opts.inUse ? { pinned: opts.inUse } : {}),
    });
    this.log = new PgSessionLog(db, opts);
    this.tables = new PgSessionTables(db);
  }

  async init(): Promise<void> {
    await this.names.load();
    await this.log.read();
    await this.applyMoved();
  }

  /** Moved from files after a crash, a log line may hold messages its session's file lacked. */
  private async applyMoved(): Promise<void> {
    const { sessions, restored } = await applyLines(this.log.moved.splice(0), (l) => this.getOrCreate(l.channelType, l.chatId));
    for (const session of sessions) {
      this.cache.entryOf(session.id).whole = true;
      await this.write(session, undefined);
    }
    if (restored > 0) this.logger.warn({ messages: restored, sessions: sessions.length }, 'restored messages a move brought in the session log only');
  }

  takeLastRun(): WalLine[] {
    return this.log.take();
  }

  async takeOrphaned(): Promise<WalLine[]> {
    await this.log.read();
    await this.applyMoved();
    return this.log.take();
  }

  forgetLog(): Promise<void> {
    return this.log.forget(true);
  }

  deriveFromLog(derived: DerivedFromLog): void {
    this.log.beforeForget = derived.flush;
    this.log.forgettable = derived.durable;
  }

  reread(channelType: string, chatId: string): void {
    this.cache.dropIdle(chatKey({ channel: channelType, chatId }));
  }

  discard(channelType: string, chatId: string): void {
    this.cache.discard(chatKey({ channel: channelType, chatId }));
  }

  getOrCreate(channelType: string, chatId: string): Promise<Session> {
    const chat = { channel: channelType, chatId };
    return this.cache.getOrCreate(chat, (entry) => this.read(chat, entry));
  }

  /** Reads the chat's session: from its head and rows, or from a moved file's text (checked as a file is). */
  private async read(chat: Chat, entry: Entry): Promise<Session> {
    const { rows } = await this.db.query<StoredSession & Record<string, unknown>>(READ_SESSION, [chatKey(chat)]);
    const row = rows[0];
    let session: Session | undefined;
    if (row) {
      const repaired = { fields: 0 };
      try {
        session = parseSession(row.text !== null ? JSON.parse(row.text.toString('utf8')) : sessionObjectOf(row), chat.channel, chat.chatId, repaired);
        if (repaired.fields > 0)
          this.logger.warn(
            { code: 'session.repaired', session: chatKey(chat), fields: repaired.fields },
            'session had fields of the wrong type; repaired them',
          );
        // Rows written by this store are read as written; anything else is written whole at the first change.
        entry.whole = row.text !== null || repaired.fields > 0;
        entry.stored = row.text !== null ? 0 : row.bodies.length;
      } catch (err) {
        const at = String(Date.now());
        await this.db.tx((sql) => setAside(sql, chat, at, asideText(row)));
        this.logger.error(
          { code: 'session.corrupt', session: chatKey(chat), movedTo: `session_aside ${at}`, reason: (err as Error).message },
          'session could not be read; set it aside and started a fresh session',
        );
        session = undefined;
      }
    }
    if (!session) {
      session = newSession(chat.channel, chat.chatId);
      entry.whole = true;
      entry.stored = 0;
    }
    return session;
  }

  writer(session: Session): SessionWriter {
    // Looked up at each call: an idle session's entry may have been dropped and made again.
    const entry = () => this.cache.entryOf(session.id);
    return {
      ...this.cache.writerBase(session, (added) => this.commit(session, added)),
      hold: () => this.log.hold(),
      revise: async (message, content) => {
        message.content = content;
        const e = entry();
        // Owed: the next commit writes it as it is now. Stored: its row is written now.
        if (e.owed.includes(message)) return;
        e.revised.add(message);
        await this.write(session, undefined);
      },
      replace: async (messages, compaction, basedOn) => {
        const e = entry();
        e.owed = replaceIn(session, e.owed, messages, compaction, basedOn);
        e.whole = true;
        await this.write(session, undefined);
      },
      clear: async () => {
        clearIn(session);
        const e = entry();
        e.owed = [];
        e.whole = true;
        await this.write(session, undefined);
      },
      setModel: async (model) => {
        setModelIn(session, model);
        await this.write(session, undefined);
      },
    };
  }

  /** Everything owed and `added`, committed with one log line. */
  private async commit(session: Session, added: SessionMessage[]): Promise<void> {
    const e = this.cache.entryOf(session.id);
    const messages = [...e.owed, ...added];
    e.owed = [];
    try {
      await this.write(session, messages);
    } catch (err) {
      e.owed = [...messages, ...e.owed];
      throw new AppError('storage.write_failed', { action: 'log messages of', target: session.id, reason: (err as Error).message }, { cause: err });
    }
  }

  /** Queues a write of what changed in the session (and a log line of `line`); writes of one session run in call order. */
  private write(session: Session, line: SessionMessage[] | undefined): Promise<void> {
    return this.cache.serial(session.id, (e) => this.writeNow(session, e, line));
  }

  /** One transaction: the rows added since the last write (or all of them), revised rows, the log line, the head. */
  private async writeNow(session: Session, e: Entry, line: SessionMessage[] | undefined): Promise<void> {
    const whole = e.whole;
    const revised = [...e.revised];
    const messages = session.messages.slice();
    const from = whole ? 0 : e.stored;
    const changed = whole ? [] : revised.map((m) => ({ at: messages.indexOf(m), m })).filter((r) => r.at >= 0 && r.at < from);
    session.updatedAt = new Date().toISOString();
    const lineText = line ? lineWithoutSeq(session, line) : null;
    const params = [
      session.id,
      session.channelType,
      session.chatId,
      from,
      messages.slice(from).map((m) => JSON.stringify(m)),
      changed.map((r) => r.at),
      changed.map((r) => JSON.stringify(r.m)),
      headOf(session),
      this.log.run,
      lineText,
    ];
    e.whole = false;
    e.revised.clear();
    let seq: string | null;
    try {
      seq = await this.db.tx(async (sql) => {
        if (whole) await sql.query('DELETE FROM session_messages WHERE chat = $1', [session.id]);
        const { rows } = await sql.query<{ wal_seq: string | null }>(WRITE_SESSION, params);
        return rows[0]?.wal_seq ?? null;
      });
    } catch (err) {
      if (whole) e.whole = true;
      for (const m of revised) e.revised.add(m);
      throw err;
    }
    e.stored = messages.length;
    if (seq !== null) session.walSeq = Math.max(session.walSeq ?? 0, Number(seq));
    if (lineText !== null) this.log.wrote(Buffer.byteLength(lineText));
    this.cache.trim();
  }

  /** The words out of the chat's log lines and its sessions set aside, after the chat's writes under way. */
  async redact(channelType: string, chatId: string, words: Redaction): Promise<string[]> {
    await this.cache.entries.get(chatKey({ channel: channelType, chatId }))?.write?.catch(() => undefined);
    const chat = { channel: channelType, chatId };
    const changed: string[] = [];
    const lines = await this.log.redact(chat, words);
    if (lines > 0) changed.push(`${lines} line(s) of the session log (session_log)`);
    const aside = await this.tables.redactAside(chat, words);
    if (aside > 0) changed.push(`${aside} session(s) set aside as damaged (session_aside)`);
    return changed;
  }

  chats(): Promise<Chat[]> {
    return this.tables.chats('SELECT channel, chat_id FROM sessions');
  }

  traces(): Promise<Chat[]> {
    return this.tables.chats(
      'SELECT channel, chat_id FROM sessions UNION SELECT channel, chat_id FROM session_aside UNION SELECT channel, chat_id FROM session_log',
    );
  }

  async footprint(channelType: string, chatId: string): Promise<Footprint> {
    const { rows } = await this.db.query<{ bytes: string; mtime: number }>(
      `SELECT coalesce(octet_length(text), octet_length(head) + (SELECT coalesce(sum(octet_length(body)), 0) FROM session_messages m WHERE m.chat = s.chat)) AS bytes,
         (extract(epoch FROM updated_at) * 1000)::float8 AS mtime
       FROM sessions s WHERE chat = $1`,
      [chatKey({ channel: channelType, chatId })],
    );
    return rows[0] ? { bytes: Number(rows[0].bytes), mtime: rows[0].mtime } : { bytes: 0, mtime: 0 };
  }

  async erase(chats: Chat[]): Promise<string[]> {
    for (const c of chats) this.cache.entries.delete(chatKey(c));
    return this.tables.erase(chats, (sql) => this.log.erase(sql, chats));
  }

  dump(): AsyncIterable<SessionItem> {
    return this.tables.dump();
  }

  load(items: AsyncIterable<SessionItem>): Promise<number> {
    this.cache.entries.clear();
    return this.tables.load(items);
  }

  isEmpty(): Promise<boolean> {
    return this.tables.isEmpty();
  }

  clear(): Promise<void> {
    this.cache.entries.clear();
    return this.tables.clear();
  }

  async flush(): Promise<void> {
    await this.cache.settle();
    await this.names.flush();
  }

  /** Flushes; the Database is its owner's to close. */
  close(): Promise<void> {
    return this.flush();
  }
}
