/**
 * FileSessionStore, the sessions store (store.ts) as files: one JSON file per `channel:chat` in
 * `sessions/`, cached in memory after the first load.
 * Writes are atomic and locked (see storage/atomic.ts) and serialized per session, so a save
 * never overlaps another save of the same file. A file that fails to parse is set aside as
 * `*.corrupt-<timestamp>` and a fresh session starts: a bad file never stops the daemon. A file
 * that parses but has fields of the wrong type is repaired (sessions/model.ts, repairMessage).
 *
 * A turn's messages become durable through the write-ahead log (wal.ts, one fsynced append);
 * the file is then rewritten in the background (a checkpoint), and `init` replays whatever a
 * crash left in the log before anything else reads a session. Messages change only through a
 * `SessionWriter` (writer.ts), which keeps that protocol. Beside them it keeps the chats' names
 * as the channels give them (names.ts).
 */
import { lstat, readFile, readdir, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../core/log.js';
import { ensureDir, removeStaleTempFiles, withFileLock, writeFileAtomic } from '../storage/atomic.js';
import { chatOfFileKey, isInside, sessionFileKey } from '../storage/paths.js';
import { redactFile, redactJsonLines, type Redaction } from '../storage/redaction.js';
import { dropJsonLines, parseJsonLines } from '../storage/json-lines.js';
import { footprintOf, type Footprint } from '../storage/footprint.js';
import { readRegular, withinDeadline } from '../storage/regular.js';
import { WORKSPACE_FILES } from '../storage/workspace-files.js';
import { AppError } from '../core/errors.js';
import { chatKey, type Chat } from '../core/chat.js';
import { newConversationId, newSession, parseSession, type Session, type SessionMessage } from './model.js';
import { SessionWal } from './wal.js';
import type { SessionWriter } from './writer.js';
import { answered, findRecorded, passed, userMessageOf } from './received.js';
import { FileChatNames, type ChatNames } from './names.js';
import type { DerivedFromLog, SessionStore, WalLine } from './store.js';

/** How long a session file may lag behind its log (its messages are durable meanwhile). */
const CHECKPOINT_DELAY_MS = 200;

export interface SessionStoreOptions {
  /** Sessions kept in memory; idle ones past this are dropped and read again on their next message. */
  maxCached?: number;
  /** True while a chat has a message queued or being handled: its session is never dropped then. */
  inUse?: (id: string) => boolean;
  /** Where the chats' names are kept (PostgreSQL with DATABASE_URL: app/stores.ts); by default the file beside the sessions. */
  names?: ChatNames;
}

/** Enough for every chat active in the last while; a dropped one costs one file read later. */
export const DEFAULT_MAX_CACHED = 100;

/** Everything the store keeps about one session. */
interface Entry {
  /** The session once loaded (cached); undefined while its file is read. */
  session?: Session | undefined;
  loading?: Promise<Session> | undefined;
  /** The newest save in the session's chain (saves of one session run one after another). */
  write?: Promise<void> | undefined;
  /** Messages recorded but in no log line or saved file yet, oldest first. */
  owed: SessionMessage[];
  /** A background checkpoint is queued and has not serialized yet. */
  queued: boolean;
  timer?: NodeJS.Timeout | undefined;
}

export class FileSessionStore implements SessionStore {
  /** One entry per session, least recently used first. */
  private readonly entries = new Map<string, Entry>();
  private readonly wal: SessionWal;
  /** The chats' names, kept when seen (names.ts): read by the memory page. */
  readonly names: ChatNames;

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
    this.names = opts.names ?? new FileChatNames(`${dir}.names.json`, log);
  }

  /** The workspace's sessions (`sessions/`, the log and the names beside it: storage/workspace-files.ts). */
  static inWorkspace(workspaceDir: string, log: Logger, opts: SessionStoreOptions = {}): FileSessionStore {
    return new FileSessionStore(path.join(workspaceDir, WORKSPACE_FILES.sessions), log, opts);
  }

  async init(): Promise<void> {
    await ensureDir(this.dir);
    const removed = await removeStaleTempFiles(this.dir);
    if (removed > 0) this.log.info({ removed }, 'removed temp files left by an earlier crash');
    await this.names.load();
    await this.replay();
  }

  /** The log lines the last run left (replayed into the session files), until `takeLastRun`. */
  private lastRun: WalLine[] = [];

  /**
   * The lines the last run left in the session log, for what derives from them (the daily
   * notes and index rows, turn/derived.ts): taken once. The log keeps them until `forgetLog`.
   */
  takeLastRun(): WalLine[] {
    return this.lastRun.splice(0);
  }

  /** Empties the session log once what derives from its lines is written (start, stop). */
  forgetLog(): Promise<void> {
    return this.wal.truncate(true);
  }

  /**
   * What derives from the log's lines: `flush` makes it durable before the log forgets them,
   * `durable` says (where the log decides) that nothing written since is still unsynced.
   */
  deriveFromLog(derived: DerivedFromLog): void {
    this.wal.beforeForget = derived.flush;
    this.wal.forgettable = derived.durable;
  }

  /** Applies log lines a crash kept from reaching their session files; the log keeps them (see takeLastRun). */
  private async replay(): Promise<void> {
    const lines = await this.wal.read();
    this.lastRun = lines;
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
    if (restored > 0) this.log.warn({ messages: restored, sessions: touched.size }, 'restored messages a crash kept from reaching their session files');
  }

  /** The file for a chat. Ids are encoded, so the path is always directly inside `dir`. */
  fileFor(channelType: string, chatId: string): string {
    const file = path.join(this.dir, `${sessionFileKey(channelType, chatId)}.json`);
    if (!isInside(this.dir, file) || path.dirname(file) !== this.dir) {
      throw new AppError('storage.path_escape', { reason: 'session id does not map to a file inside sessions/' });
    }
    return file;
  }

  async getOrCreate(channelType: string, chatId: string): Promise<Session> {
    const key = chatKey({ channel: channelType, chatId });
    const e = this.entries.get(key);
    if (e?.session) {
      // Most recently used last: the cache drops from the front.
      this.entries.delete(key);
      this.entries.set(key, e);
      return e.session;
    }
    if (e?.loading) return e.loading;
    const entry = e ?? this.entryOf(key);
    const loading = this.load(channelType, chatId, entry).finally(() => {
      entry.loading = undefined;
      this.dropIfBare(key, entry);
    });
    entry.loading = loading;
    return loading;
  }

  /** The session if it is in memory (no file is read). */
  get(id: string): Session | undefined {
    return this.entries.get(id)?.session;
  }

  private async load(channelType: string, chatId: string, entry: Entry): Promise<Session> {
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
          this.log.warn(
            { code: 'session.repaired', file: path.basename(file), fields: repaired.fields },
            'session file had fields of the wrong type; repaired them',
          );
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
    entry.session = session;
    this.trim();
    return session;
  }

  /** The entry for `id`, created (empty, nothing cached) when there is none. */
  private entryOf(id: string): Entry {
    let e = this.entries.get(id);
    if (!e) this.entries.set(id, (e = { owed: [], queued: false }));
    return e;
  }

  /** Nothing loaded, loading, written or owed: the entry goes. */
  private dropIfBare(id: string, e: Entry): void {
    if (!e.session && !e.loading && !e.write && !e.queued && !e.timer && e.owed.length === 0 && this.entries.get(id) === e) this.entries.delete(id);
  }

  /**
   * Drops the least recently used sessions past `maxCached` — only idle ones: nothing queued
   * or running for the chat, no write in flight or owed. A dropped session is read from its
   * file again on its next message (the file is complete: nothing was owed).
   */
  private trim(): void {
    // At most one cached session per entry: the cheap bound first (this runs after every load and save).
    if (this.entries.size <= this.maxCached) return;
    let cached = this.cachedCount;
    if (cached <= this.maxCached) return;
    for (const [id, e] of this.entries) {
      if (cached <= this.maxCached) return;
      if (!e.session) continue;
      const idle = !e.write && !e.queued && e.owed.length === 0 && !this.wal.waiting(id) && !this.inUse(id);
      if (idle) {
        this.entries.delete(id);
        cached--;
      }
    }
  }

  /** Sessions held in memory (for /status and the benchmarks). */
  get cachedCount(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.session) n++;
    return n;
  }

  /** Persists the session. Saves of one session run one after another, in call order. */
  async save(session: Session): Promise<void> {
    const file = this.fileFor(session.channelType, session.chatId);
    const e = this.entryOf(session.id);
    const next = (e.write ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => {
        // Serialize at write time so the newest state wins when saves queue up; everything
        // recorded or logged so far is in it.
        e.queued = false;
        // Recorded messages this write covers. They stay owed to the log until the file is
        // on disk: a log line written meanwhile (the answer) must still carry them, or a kill
        // before the rename leaves them in neither place.
        const covered = new Set(e.owed);
        const upTo = session.walSeq ?? 0;
        session.updatedAt = new Date().toISOString();
        const json = JSON.stringify(session, null, 1);
        return withFileLock(file, () => writeFileAtomic(file, json)).then(() => {
          e.owed = e.owed.filter((m) => !covered.has(m));
          this.wal.checkpointed(session.id, upTo);
          this.trim();
        });
      });
    e.write = next;
    try {
      await next;
    } finally {
      if (e.write === next) e.write = undefined;
      this.dropIfBare(session.id, e);
    }
  }

  /** The one way to change a session's messages (see writer.ts for the protocol it keeps). */
  writer(session: Session): SessionWriter {
    // Looked up at each call: an idle session's entry may have been dropped and made again.
    const entry = () => this.entryOf(session.id);
    const record = (message: SessionMessage) => {
      session.messages.push(message);
      entry().owed.push(message);
    };
    return {
      session,
      receive: (msg) => {
        const found = findRecorded(session.messages, msg);
        if (found) return { message: found, fresh: false, answered: answered(session.messages, found), passed: passed(session.messages, found) };
        const message = userMessageOf(msg);
        session.metadata.messagesReceived++;
        record(message);
        return { message, fresh: true, answered: false, passed: false };
      },
      record,
      hold: () => this.wal.hold(),
      commit: async () => {
        const e = entry();
        if (e.owed.length > 0) await this.commit(session, e, []);
      },
      append: async (message) => {
        session.messages.push(message);
        await this.commit(session, entry(), [message]);
      },
      revise: async (message, content) => {
        message.content = content;
        // Owed: the next log line carries it as it is now. Already logged: the file is rewritten.
        if (!entry().owed.includes(message)) await this.save(session);
      },
      replace: async (messages, compaction, basedOn) => {
        // Written while the caller worked from its copy (a compaction waits for its summary, a
        // /stop meanwhile leaves its marker): kept, after the new list.
        const known = basedOn ? new Set([...basedOn, ...messages].map((m) => m.id)) : undefined;
        const since = known ? session.messages.filter((m) => !known.has(m.id)) : [];
        session.messages = [...messages, ...since];
        if (compaction) {
          session.metadata.messagesCompacted += compaction.removed;
          session.metadata.lastCompaction = compaction;
        }
        // A message still owed stays owed in the form it now has (a compaction may flag it);
        // one dropped must not come back with the next log line.
        const now = new Map(session.messages.map((m) => [m.id, m]));
        const e = entry();
        e.owed = e.owed.flatMap((m) => now.get(m.id) ?? []);
        await this.save(session);
      },
      clear: async () => {
        session.messages = [];
        session.metadata.conversationId = newConversationId();
        entry().owed = [];
        await this.save(session);
      },
      setModel: async (model) => {
        if (model === undefined) delete session.metadata.model;
        else session.metadata.model = model;
        await this.save(session);
      },
    };
  }

  /** One log line with everything owed and `added`, fsynced; then a checkpoint is scheduled. */
  private async commit(session: Session, e: Entry, added: SessionMessage[]): Promise<void> {
    const messages = [...e.owed, ...added];
    e.owed = [];
    const { seq, written } = this.wal.append(session, messages);
    session.walSeq = Math.max(session.walSeq ?? 0, seq);
    try {
      await written;
    } catch (err) {
      e.owed = [...messages, ...e.owed];
      throw new AppError('storage.write_failed', { action: 'log messages of', target: session.id, reason: (err as Error).message }, { cause: err });
    }
    this.checkpoint(session, e);
  }

  /**
   * Schedules a background rewrite of the session file, unless one is already waiting. The
   * short delay groups a burst of turns (a busy group chat) into one rewrite. A direct save
   * (/new, /model, a compaction) clears `queued` but leaves a waiting timer: that one serves,
   * or a second timer would be lost to `flush` and rewrite the file after close.
   */
  private checkpoint(session: Session, e: Entry): void {
    if (e.queued || e.timer) return;
    e.queued = true;
    e.timer = setTimeout(() => this.runCheckpoint(session, e), CHECKPOINT_DELAY_MS);
    e.timer.unref();
  }

  private runCheckpoint(session: Session, e: Entry): void {
    e.timer = undefined;
    this.save(session).catch((err: unknown) => {
      // The log still holds the messages; the next commit (or the next start) tries again.
      this.log.warn({ err, session: session.id }, 'could not rewrite a session file; its messages are safe in the session log');
    });
  }

  /**
   * The chat's lines of the session log (atomic rewrite, in order with appends) and its files set
   * aside as corrupt, with the words redacted; names what changed, relative to the workspace.
   */
  async redact(channelType: string, chatId: string, words: Redaction): Promise<string[]> {
    const changed: string[] = [];
    const mine = (l: Partial<WalLine> | null) => l?.channelType === channelType && l.chatId === chatId;
    if (await this.wal.rewrite((text) => redactJsonLines(text, words, mine))) changed.push(path.basename(this.wal.file));
    for (const file of await this.setAside(channelType, chatId)) if (await redactFile(file, words)) changed.push(this.named(file));
    return changed;
  }

  /** The chat's session files set aside as corrupt (`<file>.corrupt-<time>`). */
  private async setAside(channelType: string, chatId: string): Promise<string[]> {
    const prefix = `${path.basename(this.fileFor(channelType, chatId))}.corrupt-`;
    const names = await readdir(this.dir).catch(() => [] as string[]);
    return names.filter((n) => n.startsWith(prefix)).map((n) => path.join(this.dir, n));
  }

  /** The chat a session file's name says (the name without `.json`); undefined for a name shortened with a hash. */
  private static chatOfName(name: string): Chat | undefined {
    return chatOfFileKey(name.replace(/\.json(\.corrupt-.*)?$/, ''));
  }

  /**
   * The chats with a session file. A file's name says whose it is (storage/paths.ts); one
   * shortened with a hash is read (only a regular file, within the read deadline) for its chat.
   */
  async chats(): Promise<Chat[]> {
    const out = new Map<string, Chat>();
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const chat = FileSessionStore.chatOfName(name) ?? (await this.chatInFile(path.join(this.dir, name)));
      if (chat) out.set(chatKey(chat), chat);
    }
    return [...out.values()];
  }

  /** The chat a session file names inside; undefined for a link, a FIFO, a torn or corrupt file (the store reports those when it loads them). */
  private async chatInFile(file: string): Promise<Chat | undefined> {
    const st = await lstat(file).catch(() => null);
    if (!st?.isFile()) return undefined;
    const raw = await withinDeadline(path.basename(file), readRegular(file)).catch(() => '');
    try {
      const j = JSON.parse(raw) as { channelType?: unknown; chatId?: unknown };
      return typeof j.channelType === 'string' && typeof j.chatId === 'string' ? { channel: j.channelType, chatId: j.chatId } : undefined;
    } catch {
      return undefined;
    }
  }

  /** Every chat named by a session file, a copy set aside as corrupt, or a line of the log (not read for a hashed name). */
  async traces(): Promise<Chat[]> {
    const out = new Map<string, Chat>();
    const add = (c: Chat | undefined) => c && out.set(chatKey(c), c);
    for (const name of await readdir(this.dir).catch(() => [] as string[])) add(FileSessionStore.chatOfName(name));
    const text = await readFile(this.wal.file, 'utf8').catch(() => '');
    for (const { line } of parseJsonLines(text)) if (typeof line?.chatId === 'string') add({ channel: line.channelType, chatId: line.chatId });
    return [...out.values()];
  }

  /** The chat's session file: its size and when it last changed. */
  footprint(channelType: string, chatId: string): Promise<Footprint> {
    return footprintOf(this.fileFor(channelType, chatId));
  }

  /**
   * Deletes the chats' session files, their copies set aside as corrupt and their lines of the
   * log (rewritten once, in order with appends); one line per thing deleted, for purge.
   */
  async erase(chats: Chat[]): Promise<string[]> {
    const deleted: string[] = [];
    const ids = new Set(chats.map((c) => chatKey(c)));
    for (const id of ids) this.entries.delete(id);
    const names = chats.map((c) => path.basename(this.fileFor(c.channel, c.chatId)));
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      if (!names.some((n) => name === n || name.startsWith(`${n}.corrupt-`))) continue;
      await unlink(path.join(this.dir, name));
      deleted.push(`session file ${this.named(path.join(this.dir, name))}`);
    }
    let lines = 0;
    await this.wal.rewrite((text) => {
      const next = dropJsonLines(text, (l) => ids.has(`${l?.channelType}:${l?.chatId}`));
      lines = next.dropped;
      return next.text;
    });
    if (lines > 0) deleted.push(`${lines} line(s) of the session log ${path.basename(this.wal.file)}`);
    return deleted;
  }

  /** A file of the store as the workspace names it (`sessions/…`): in purge's and forget's reports. */
  private named(file: string): string {
    return path.relative(path.dirname(this.dir), file);
  }

  /** Runs waiting checkpoints now and waits for every write (shutdown, tests). */
  async flush(): Promise<void> {
    for (const e of [...this.entries.values()]) {
      if (!e.timer) continue;
      clearTimeout(e.timer);
      if (e.session) this.runCheckpoint(e.session, e);
      else e.timer = undefined;
    }
    for (;;) {
      const writes = [...this.entries.values()].flatMap((e) => (e.write ? [e.write] : []));
      if (writes.length === 0) return this.names.flush();
      await Promise.allSettled(writes);
    }
  }

  /** Flushes, then closes the session log (shutdown). */
  async close(): Promise<void> {
    await this.flush();
    await this.wal.shutdown();
  }
}
