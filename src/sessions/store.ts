/**
 * SessionStore: one JSON file per `channel:chat`, cached in memory after the first load.
 * Writes are atomic and locked (see storage/atomic.ts) and serialized per session, so a save
 * never overlaps another save of the same file. A file that fails to parse is set aside as
 * `*.corrupt-<timestamp>` and a fresh session starts: a bad file never stops the daemon. A file
 * that parses but has fields of the wrong type is repaired (sessions/model.ts, repairMessage).
 *
 * A turn's messages become durable through the write-ahead log (wal.ts, one fsynced append);
 * the file is then rewritten in the background (a checkpoint), and `init` replays whatever a
 * crash left in the log before anything else reads a session.
 */
import { readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../log.js';
import { ensureDir, removeStaleTempFiles, withFileLock, writeFileAtomic } from '../storage/atomic.js';
import { isInside, sessionFileKey } from '../storage/paths.js';
import { AppError } from '../errors.js';
import {
  makeMessage,
  newConversationId,
  newSession,
  parseSession,
  sessionKey,
  type Session,
  type SessionMessage,
} from './model.js';
import { tailStart } from './integrity.js';
import { SessionWal } from './wal.js';

export const SUMMARY_PREFIX = '[Conversation summary]';
/** How long a session file may lag behind its log (its messages are durable meanwhile). */
const CHECKPOINT_DELAY_MS = 200;

export interface SessionStoreOptions {
  /** Sessions kept in memory; idle ones past this are dropped and read again on their next message. */
  maxCached?: number;
  /** True while a chat has a message queued or being handled: its session is never dropped then. */
  inUse?: (id: string) => boolean;
}

/** Enough for every chat active in the last while; a dropped one costs one file read later. */
export const DEFAULT_MAX_CACHED = 100;

export class SessionStore {
  private readonly cache = new Map<string, Session>();
  private readonly loading = new Map<string, Promise<Session>>();
  private readonly writes = new Map<string, Promise<void>>();
  /** Messages added by `record`, in memory only until the next log line or save. */
  private readonly unlogged = new Map<string, SessionMessage[]>();
  /** Sessions whose background checkpoint is queued but has not serialized yet. */
  private readonly queued = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly wal: SessionWal;

  private readonly maxCached: number;
  private readonly inUse: (id: string) => boolean;

  constructor(
    readonly dir: string,
    private readonly log: Logger,
    opts: SessionStoreOptions = {},
  ) {
    this.maxCached = opts.maxCached ?? DEFAULT_MAX_CACHED;
    this.inUse = opts.inUse ?? (() => false);
    // Beside sessions/, not in it: the folder holds exactly one file per chat.
    this.wal = new SessionWal(`${dir}.wal.jsonl`);
  }

  async init(): Promise<void> {
    await ensureDir(this.dir);
    const removed = await removeStaleTempFiles(this.dir);
    if (removed > 0) this.log.info({ removed }, 'removed temp files left by an earlier crash');
    await this.replay();
  }

  /** Applies log lines a crash kept from reaching their session files, then empties the log. */
  private async replay(): Promise<void> {
    const lines = await this.wal.read();
    // Ids already in each session, built once per session (not per line: restarts stay fast).
    const touched = new Map<string, { session: Session; have: Set<string> }>();
    let restored = 0;
    for (const line of lines) {
      const session = await this.getOrCreate(line.channelType, line.chatId);
      if (line.seq <= (session.walSeq ?? 0)) continue;
      let t = touched.get(session.id);
      if (!t) touched.set(session.id, (t = { session, have: new Set(session.messages.map((m) => m.id)) }));
      for (const m of line.messages) {
        if (t.have.has(m.id)) continue;
        t.have.add(m.id);
        session.messages.push(m);
        restored++;
      }
      session.walSeq = line.seq;
    }
    for (const { session } of touched.values()) await this.save(session);
    await this.wal.truncate(true);
    if (restored > 0) this.log.warn({ messages: restored, sessions: touched.size }, 'restored messages a crash kept from reaching their session files');
  }

  /** The file for a chat. Ids are encoded, so the path is always directly inside `dir`. */
  fileFor(channelType: string, chatId: string): string {
    const file = path.join(this.dir, `${sessionFileKey(channelType, chatId)}.json`);
    if (!isInside(this.dir, file) || path.dirname(file) !== this.dir) {
      throw new AppError('storage.path_escape', 'session id does not map to a file inside sessions/');
    }
    return file;
  }

  async getOrCreate(channelType: string, chatId: string): Promise<Session> {
    const key = sessionKey(channelType, chatId);
    const cached = this.cache.get(key);
    if (cached) {
      // Most recently used last: the cache drops from the front.
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached;
    }
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.load(channelType, chatId).finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  get(id: string): Session | undefined {
    return this.cache.get(id);
  }

  private async load(channelType: string, chatId: string): Promise<Session> {
    const file = this.fileFor(channelType, chatId);
    let session: Session;
    let text: string | undefined;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text === undefined) {
      session = newSession(channelType, chatId);
    } else {
      const repaired = { fields: 0 };
      try {
        session = parseSession(JSON.parse(text), channelType, chatId, repaired);
        if (repaired.fields > 0) {
          // Written by an older version (or by hand): what the next save writes is the repaired form.
          this.log.warn({ code: 'session.repaired', file: path.basename(file), fields: repaired.fields }, 'session file had fields of the wrong type; repaired them');
        }
      } catch (err) {
        const aside = `${file}.corrupt-${Date.now()}`;
        await rename(file, aside).catch(() => undefined);
        this.log.error(
          { code: 'session.corrupt', file: path.basename(file), movedTo: path.basename(aside), reason: (err as Error).message },
          'session file could not be parsed; set it aside and started a fresh session',
        );
        session = newSession(channelType, chatId);
      }
    }
    this.cache.set(session.id, session);
    this.trim();
    return session;
  }

  /**
   * Drops the least recently used sessions past `maxCached` — only idle ones: nothing queued
   * or running for the chat, no write in flight or owed. A dropped session is read from its
   * file again on its next message (the file is complete: nothing was owed).
   */
  private trim(): void {
    if (this.cache.size <= this.maxCached) return;
    for (const id of this.cache.keys()) {
      if (this.cache.size <= this.maxCached) return;
      const idle = !this.writes.has(id) && !this.queued.has(id) && !this.unlogged.has(id) && !this.wal.waiting(id) && !this.inUse(id);
      if (idle) this.cache.delete(id);
    }
  }

  /** Sessions held in memory (for /status and the benchmarks). */
  get cachedCount(): number {
    return this.cache.size;
  }

  /** Persists the session. Saves of one session run one after another, in call order. */
  async save(session: Session): Promise<void> {
    const file = this.fileFor(session.channelType, session.chatId);
    const prev = this.writes.get(session.id) ?? Promise.resolve();
    const next = prev
      .catch(() => undefined)
      .then(() => {
        // Serialize at write time so the newest state wins when saves queue up; everything
        // recorded or logged so far is in it.
        this.queued.delete(session.id);
        // Recorded messages this write covers. They stay owed to the log until the file is
        // on disk: a log line written meanwhile (the answer) must still carry them, or a kill
        // before the rename leaves them in neither place.
        const covered = new Set(this.unlogged.get(session.id));
        const upTo = session.walSeq ?? 0;
        session.updatedAt = new Date().toISOString();
        const json = JSON.stringify(session, null, 1);
        return withFileLock(file, () => writeFileAtomic(file, json)).then(() => {
          this.forgetUnlogged(session.id, (m) => covered.has(m));
          this.wal.checkpointed(session.id, upTo);
          this.trim();
        });
      });
    this.writes.set(session.id, next);
    try {
      await next;
    } finally {
      if (this.writes.get(session.id) === next) this.writes.delete(session.id);
    }
  }

  /**
   * Appends a message and makes it durable before returning: one log line (with any messages
   * `record`ed before it), fsynced; the session file follows in the background.
   */
  async append(session: Session, message: SessionMessage): Promise<void> {
    session.messages.push(message);
    await this.commit(session, [message]);
  }

  /**
   * Appends a message without making it durable yet: for a user message whose words are
   * already durable elsewhere (the inbox journal), so the turn's messages reach the disk in
   * one write with its answer. `commitRecorded` covers a turn that ends without an answer.
   */
  record(session: Session, message: SessionMessage): void {
    session.messages.push(message);
    const list = this.unlogged.get(session.id) ?? [];
    list.push(message);
    this.unlogged.set(session.id, list);
  }

  /** Drops recorded messages matching `drop` from what the next log line must carry. */
  private forgetUnlogged(id: string, drop: (m: SessionMessage) => boolean): void {
    const rest = (this.unlogged.get(id) ?? []).filter((m) => !drop(m));
    if (rest.length > 0) this.unlogged.set(id, rest);
    else this.unlogged.delete(id);
  }

  async commitRecorded(session: Session): Promise<void> {
    if (this.unlogged.has(session.id)) await this.commit(session, []);
  }

  private async commit(session: Session, added: SessionMessage[]): Promise<void> {
    const messages = [...(this.unlogged.get(session.id) ?? []), ...added];
    this.unlogged.delete(session.id);
    const { seq, written } = this.wal.append(session, messages);
    session.walSeq = Math.max(session.walSeq ?? 0, seq);
    try {
      await written;
    } catch (err) {
      this.unlogged.set(session.id, [...messages, ...(this.unlogged.get(session.id) ?? [])]);
      throw new AppError('storage.write_failed', `could not log messages of ${session.id}: ${(err as Error).message}`, { cause: err });
    }
    this.checkpoint(session);
  }

  /**
   * Schedules a background rewrite of the session file, unless one is already waiting. The
   * short delay groups a burst of turns (a busy group chat) into one rewrite.
   */
  private checkpoint(session: Session): void {
    if (this.queued.has(session.id)) return;
    this.queued.add(session.id);
    const timer = setTimeout(() => this.runCheckpoint(session), CHECKPOINT_DELAY_MS);
    timer.unref();
    this.timers.set(session.id, timer);
  }

  private runCheckpoint(session: Session): void {
    this.timers.delete(session.id);
    this.save(session).catch((err: unknown) => {
      // The log still holds the messages; the next commit (or the next start) tries again.
      this.log.warn({ err, session: session.id }, 'could not rewrite a session file; its messages are safe in the session log');
    });
  }

  async delete(id: string): Promise<void> {
    const session = this.cache.get(id);
    this.cache.delete(id);
    if (!session) return;
    await unlink(this.fileFor(session.channelType, session.chatId)).catch(() => undefined);
  }

  /** `/new`: empties the conversation and starts a new conversation id; memory files are untouched. */
  async clearMessages(id: string): Promise<void> {
    const session = this.require(id);
    session.messages = [];
    session.metadata.conversationId = newConversationId();
    // What was cleared must not come back with the next log line.
    this.forgetUnlogged(id, () => true);
    await this.save(session);
  }

  /**
   * Replaces a session's messages (forget) and saves the file now; what was dropped must not
   * come back with the next log line. The log itself is rewritten with `rewriteLog`.
   */
  async replaceMessages(id: string, messages: SessionMessage[]): Promise<void> {
    const session = this.require(id);
    session.messages = messages;
    const kept = new Set(messages);
    this.forgetUnlogged(id, (m) => !kept.has(m));
    await this.save(session);
  }

  /** Rewrites the session log's text (atomic, in order with appends). */
  rewriteLog(transform: (text: string) => string | null): Promise<boolean> {
    return this.wal.rewrite(transform);
  }

  getMessageCount(id: string): number {
    return this.cache.get(id)?.messages.length ?? 0;
  }

  /**
   * Replaces everything but the last `keepLast` messages with one system summary message at the
   * start. The kept tail never begins inside a tool-call group (see integrity.ts).
   */
  async compactWithSummary(id: string, summary: string, keepLast: number): Promise<{ removed: number; kept: number }> {
    const session = this.require(id);
    const start = tailStart(session.messages, keepLast);
    const removed = start;
    const tail = session.messages.slice(start);
    const summaryMessage = makeMessage('system', `${SUMMARY_PREFIX}\n${summary.trim()}`);
    session.messages = [summaryMessage, ...tail];
    const kept = new Set(tail);
    this.forgetUnlogged(id, (m) => !kept.has(m));
    session.metadata.messagesCompacted += removed;
    await this.save(session);
    return { removed, kept: tail.length };
  }

  /** Runs waiting checkpoints now and waits for every write (shutdown, tests). */
  async flush(): Promise<void> {
    for (const [id, timer] of [...this.timers]) {
      clearTimeout(timer);
      const session = this.cache.get(id);
      if (session) this.runCheckpoint(session);
      else this.timers.delete(id);
    }
    while (this.writes.size > 0) await Promise.allSettled([...this.writes.values()]);
  }

  /** Flushes, then closes the session log (shutdown). */
  async close(): Promise<void> {
    await this.flush();
    await this.wal.shutdown();
  }

  private require(id: string): Session {
    const s = this.cache.get(id);
    if (!s) throw new Error(`session ${id} is not loaded`);
    return s;
  }
}
