/**
 * The sessions a store holds in memory (store.ts: read once, then every caller gets the same
 * object), for each implementation alike (file-store.ts, pg-store.ts): one entry per chat, least
 * recently used first, its session read once however many ask at once, its writes run one after
 * another, and idle sessions past `maxCached` dropped (read again on their next message).
 */
import { chatKey, type Chat } from '../core/chat.js';
import type { Session, SessionMessage } from './model.js';
import { receiveInto } from './received.js';
import type { SessionWriter } from './writer.js';

export interface CachedSession {
  /** The session once read; undefined while it is read. */
  session?: Session | undefined;
  loading?: Promise<Session> | undefined;
  /** The newest write in the session's chain (writes of one session run one after another). */
  write?: Promise<void> | undefined;
  /** Messages recorded but in no log line yet, oldest first. */
  owed: SessionMessage[];
}

export interface SessionCacheOptions<E> {
  /** A fresh entry (nothing read). */
  entry: () => E;
  maxCached: number;
  /** True while the store still has work of its own for the entry (a checkpoint waiting): kept. */
  held?: (e: E) => boolean;
  /** True while the chat may not be dropped (work queued or running for it). */
  pinned?: (id: string) => boolean;
}

export class SessionCache<E extends CachedSession> {
  /** One entry per session, least recently used first. */
  readonly entries = new Map<string, E>();

  constructor(private readonly opts: SessionCacheOptions<E>) {}

  /** The chat's session: cached, being read, or read now by `read` (once, however many ask meanwhile). */
  getOrCreate(chat: Chat, read: (entry: E) => Promise<Session>): Promise<Session> {
    const key = chatKey(chat);
    const e = this.entries.get(key);
    if (e?.session) {
      // Most recently used last: the cache drops from the front.
      this.entries.delete(key);
      this.entries.set(key, e);
      return Promise.resolve(e.session);
    }
    if (e?.loading) return e.loading;
    const entry = e ?? this.entryOf(key);
    const loading = read(entry)
      .then((session) => {
        entry.session = session;
        this.trim();
        return session;
      })
      .finally(() => {
        entry.loading = undefined;
        this.dropIfBare(key, entry);
      });
    entry.loading = loading;
    return loading;
  }

  /** The entry for `id`, created (empty, nothing cached) when there is none. */
  entryOf(id: string): E {
    let e = this.entries.get(id);
    if (!e) this.entries.set(id, (e = this.opts.entry()));
    return e;
  }

  /** Nothing loaded, loading, written, owed or held: the entry goes. */
  dropIfBare(id: string, e: E): void {
    if (!e.session && !e.loading && !e.write && e.owed.length === 0 && !this.opts.held?.(e) && this.entries.get(id) === e) this.entries.delete(id);
  }

  /**
   * Drops the least recently used sessions past `maxCached` — only idle ones: nothing queued
   * or running for the chat, no write in flight or owed. A dropped session is read again on its
   * next message (its stored copy is complete: nothing was owed).
   */
  trim(): void {
    // At most one cached session per entry: the cheap bound first (this runs after every read and write).
    if (this.entries.size <= this.opts.maxCached) return;
    let cached = this.cachedCount;
    for (const [id, e] of this.entries) {
      if (cached <= this.opts.maxCached) return;
      if (!e.session || e.write || e.owed.length > 0 || this.opts.held?.(e) || this.opts.pinned?.(id)) continue;
      this.entries.delete(id);
      cached--;
    }
  }

  /** Drops the chat's session if it is idle (as `trim` would): read again at its next use. */
  dropIdle(id: string): void {
    const e = this.entries.get(id);
    if (!e?.session || e.loading || e.write || e.owed.length > 0 || this.opts.held?.(e) || this.opts.pinned?.(id)) return;
    this.entries.delete(id);
  }

  /**
   * Drops the chat's session and what it owes, unsaved (its turn went to another process):
   * read again at its next use. A write under way finishes on the entry it started with.
   */
  discard(id: string): void {
    const e = this.entries.get(id);
    if (!e || e.loading) return;
    e.owed.length = 0;
    this.entries.delete(id);
  }

  get cachedCount(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.session) n++;
    return n;
  }

  /** Runs `write` after the session's writes queued before it; resolves (or rejects) with it. */
  async serial(id: string, write: (e: E) => Promise<void>): Promise<void> {
    const e = this.entryOf(id);
    const next = (e.write ?? Promise.resolve()).catch(() => undefined).then(() => write(e));
    e.write = next;
    try {
      await next;
    } finally {
      if (e.write === next) e.write = undefined;
      this.dropIfBare(id, e);
    }
  }

  /** Waits until no write is under way, those started meanwhile included. */
  async settle(): Promise<void> {
    for (;;) {
      const writes = [...this.entries.values()].flatMap((e) => (e.write ? [e.write] : []));
      if (writes.length === 0) return;
      await Promise.allSettled(writes);
    }
  }

  /**
   * The part of a session's writer every store shares: `receive` and `record` add to the session
   * and to what is owed; `commit` and `append` hand what is owed (and the message appended) to
   * the store's `commit`, which writes it durably.
   */
  writerBase(
    session: Session,
    commit: (added: SessionMessage[]) => Promise<void>,
  ): Pick<SessionWriter, 'session' | 'receive' | 'record' | 'commit' | 'append'> {
    // Looked up at each call: an idle session's entry may have been dropped and made again.
    const record = (message: SessionMessage) => {
      session.messages.push(message);
      this.entryOf(session.id).owed.push(message);
    };
    return {
      session,
      receive: (msg) => receiveInto(session, msg, record),
      record,
      commit: async () => {
        if (this.entryOf(session.id).owed.length > 0) await commit([]);
      },
      append: async (message) => {
        session.messages.push(message);
        await commit([message]);
      },
    };
  }
}
