/**
 * SessionStore: one JSON file per `channel:chat`, cached in memory after the first load.
 * Writes are atomic and locked (see storage/atomic.ts) and serialized per session, so a save
 * never overlaps another save of the same file. A file that fails to parse is set aside as
 * `*.corrupt-<timestamp>` and a fresh session starts: a bad file never stops the daemon.
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

export const SUMMARY_PREFIX = '[Conversation summary]';

export class SessionStore {
  private readonly cache = new Map<string, Session>();
  private readonly loading = new Map<string, Promise<Session>>();
  private readonly writes = new Map<string, Promise<void>>();

  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  async init(): Promise<void> {
    await ensureDir(this.dir);
    const removed = await removeStaleTempFiles(this.dir);
    if (removed > 0) this.log.info({ removed }, 'removed temp files left by an earlier crash');
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
    if (cached) return cached;
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
      try {
        session = parseSession(JSON.parse(text), channelType, chatId);
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
    return session;
  }

  /** Persists the session. Saves of one session run one after another, in call order. */
  async save(session: Session): Promise<void> {
    session.updatedAt = new Date().toISOString();
    const file = this.fileFor(session.channelType, session.chatId);
    const prev = this.writes.get(session.id) ?? Promise.resolve();
    const next = prev
      .catch(() => undefined)
      .then(() => {
        // Serialize at write time so the newest state wins when saves queue up.
        const json = JSON.stringify(session, null, 1);
        return withFileLock(file, () => writeFileAtomic(file, json));
      });
    this.writes.set(session.id, next);
    try {
      await next;
    } finally {
      if (this.writes.get(session.id) === next) this.writes.delete(session.id);
    }
  }

  /** Appends a message and persists the session before returning. */
  async append(session: Session, message: SessionMessage): Promise<void> {
    session.messages.push(message);
    await this.save(session);
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
    await this.save(session);
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
    session.metadata.messagesCompacted += removed;
    await this.save(session);
    return { removed, kept: tail.length };
  }

  /** Waits for every queued write (used at shutdown). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.writes.values()]);
  }

  private require(id: string): Session {
    const s = this.cache.get(id);
    if (!s) throw new Error(`session ${id} is not loaded`);
    return s;
  }
}
