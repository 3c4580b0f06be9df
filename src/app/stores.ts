/**
 * The one place that chooses where the daemon keeps its durable state: without DATABASE_URL in
 * WORKSPACE_DIR (files and SQLite, the default), with it in PostgreSQL (docs/postgres.md). Every
 * part of the app takes its stores from here; nothing else asks which mode it runs in.
 *
 * In PostgreSQL mode the database is opened and migrated first and closed last; a process then
 * keeps in its workspace only what it rebuilds from the database (the memory index's cache) and
 * what the owner writes by hand (SYSTEM.md). The stores are added to the lifecycle as they are
 * opened, so they close after every part built from them.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Config } from '../config/env.js';
import { componentLogger, type Logger } from '../core/log.js';
import { AppError } from '../core/errors.js';
import type { ChannelProvider } from '../channels/provider.js';
import type { ChannelSection } from '../config/env.js';
import { FileRuntimeConfigStore, type RuntimeConfigStore } from '../config/runtime.js';
import { PgRuntimeConfigStore } from '../config/runtime-pg.js';
import { FileSessionStore } from '../sessions/file-store.js';
import type { SessionStore } from '../sessions/store.js';
import { PgChatNames } from '../sessions/names-pg.js';
import { PgReminderStore } from '../features/reminders/pg-store.js';
import { PgUsageStore } from '../features/usage/pg-usage.js';
import { PgSessionStore } from '../sessions/pg-store.js';
import { PgMemoryService } from '../memory/pg/service.js';
import { FileMemoryService } from '../memory/file-memory.js';
import type { MemoryService } from '../memory/service.js';
import type { PendingWrites } from '../memory/pending.js';
import { FilePendingWrites } from '../memory/pending-file.js';
import { PgPendingWrites } from '../memory/pg/pending.js';
import type { MemoryIndex } from '../index/memory-index.js';
import { SqliteMemoryIndex } from '../index/sqlite-memory-index.js';
import { PgMemoryIndex } from '../index/pg/pg-memory-index.js';
import { SqliteReminderStore } from '../features/reminders/sqlite-store.js';
import type { ReminderStore } from '../features/reminders/store.js';
import { SqliteUsageStore } from '../features/usage/sqlite-usage.js';
import type { UsageStore } from '../features/usage/usage.js';
import { FileInbox } from '../queue/file-inbox.js';
import { PgInbox } from '../queue/inbox-pg.js';
import type { Inbox } from '../queue/inbox.js';
import { PrivacyJournal, type ChangeJournal } from '../features/privacy/journal.js';
import { PgPrivacyJournal } from '../features/privacy/journal-pg.js';
import { FORGETTING_DIR, type ForgetRecord } from '../features/privacy/forget.js';
import { PURGING_DIR, type PurgeRecord } from '../features/privacy/purge.js';
import type { KeptValue } from '../storage/kept.js';
import { PgKeptValue } from '../storage/pg/kept-pg.js';
import { FileWhyStore, type WhyStore } from '../features/why/store.js';
import { PgWhyStore } from '../features/why/store-pg.js';
import { WORKSPACE_FILES } from '../storage/workspace-files.js';
import { Database } from '../storage/pg/database.js';
import type { ProcessOwner } from '../storage/pg/owner.js';
import { migrate } from '../storage/pg/migrate.js';
import { TOKEN_NAME, tokenFile } from '../web/token.js';
import type { Lifecycle } from './lifecycle.js';

export interface Stores {
  /** Where the state is kept: `files` (WORKSPACE_DIR) or `postgres` (DATABASE_URL). */
  mode: 'files' | 'postgres';
  /** With DATABASE_URL: the pool, for its health (/status). */
  database: Database | undefined;
  /** Read, its settings checked. */
  runtime: RuntimeConfigStore;
  /** Initialised: what the last run left in the session log is replayed. Its `names` are the chats' names. */
  sessions: SessionStore;
  memory: MemoryService;
  /** Memory writes held for the owner's approval (memory/pending.ts). */
  pending: PendingWrites;
  index: MemoryIndex;
  /** Closed by the reminder service that uses it. */
  reminders: ReminderStore;
  usage: UsageStore;
  /** The intake journal: the intake reads its unfinished entries at start. */
  inbox: Inbox;
  /** Forgets and purges under way (features/privacy/journal.ts). */
  forgetting: ChangeJournal<ForgetRecord>;
  purging: ChangeJournal<PurgeRecord>;
  /** The memory page's token when MEMORY_PAGE_TOKEN is unset (web/token.ts). */
  pageToken: KeptValue;
  /** What each of a chat's last answers was built from (/why). */
  why: WhyStore;
  /**
   * A channel's own stores (its `state`), in the same place; undefined for a channel that keeps
   * nothing. `owner` (in a cluster): the process as the cluster knows it; else a random id.
   */
  channelState<St>(provider: ChannelProvider<ChannelSection, St>, owner?: ProcessOwner): St | undefined;
}

export interface StoresOptions {
  /** True while a chat has work queued or running: its session stays in memory (sessions/file-store.ts). */
  inUse?: (id: string) => boolean;
  /**
   * Runs once the purge journal is open and before any chat's store is: the daemon finishes a
   * purge a kill cut short there (features/privacy/purge.ts), before anything reads the chat.
   */
  beforeChats?: (purging: ChangeJournal<PurgeRecord>, db: Database | undefined) => Promise<void>;
  /**
   * In a cluster, this process's id (registered in `beforeChats`): its session log lines carry
   * it, so a process starting beside it leaves them (sessions/pg/log.ts). Else a random one.
   */
  processId?: string;
}

/** How long a stop waits for a /forget's scrub of the index to end before closing it anyway. */
const SCRUB_WAIT_MS = 10_000;

/** The workspace's own file of a store, by its name in WORKSPACE_FILES. */
const inWorkspace = (config: Config, name: keyof typeof WORKSPACE_FILES) => path.join(config.workspaceDir, WORKSPACE_FILES[name]);

/** A process outside the cluster (a CLI, a test's stores): an id no process registered, never alive to the others. */
const loneOwner = (config: Config): ProcessOwner => ({ id: `lone-${randomBytes(6).toString('hex')}`, leaseMs: config.database.leaseMs });

/** Opens the stores where the settings say (see the top of this file), adding each to `life`. */
export async function openStores(config: Config, log: Logger, life: Lifecycle, opts: StoresOptions = {}): Promise<Stores> {
  const url = config.database.url;
  const db = url ? new Database({ url, poolSize: config.database.poolSize, log: componentLogger(log, 'Database') }) : undefined;
  try {
    return await open(config, log, life, opts, db);
  } catch (err) {
    // A start that fails leaves no connection open behind it (its stores were not handed out).
    await db?.close();
    throw err;
  }
}

async function open(config: Config, log: Logger, life: Lifecycle, opts: StoresOptions, db: Database | undefined): Promise<Stores> {
  const ws = config.workspaceDir;
  let pgRuntime: PgRuntimeConfigStore | undefined;
  let chatNames: PgChatNames | undefined;
  if (db) {
    // Closed last: every store below writes through it until it is closed.
    life.add({
      name: 'database',
      close: async () => {
        pgRuntime?.close();
        await chatNames?.flush();
        await db.close();
      },
    });
    await migrate(db, { log: componentLogger(log, 'Database') });
    pgRuntime = await PgRuntimeConfigStore.open(db, componentLogger(log, 'Config'));
  }
  const runtime: RuntimeConfigStore = pgRuntime ?? new FileRuntimeConfigStore(ws, componentLogger(log, 'Config'));
  const runtimeProblem = runtime.init();
  if (runtimeProblem) throw new AppError('config.invalid', { problem: runtimeProblem });

  const privacyLog = componentLogger(log, 'Forget');
  const forgetting: ChangeJournal<ForgetRecord> = db
    ? new PgPrivacyJournal(db, 'forgetting', privacyLog)
    : new PrivacyJournal(path.join(ws, FORGETTING_DIR), privacyLog);
  const purging: ChangeJournal<PurgeRecord> = db ? new PgPrivacyJournal(db, 'purging', privacyLog) : new PrivacyJournal(path.join(ws, PURGING_DIR), privacyLog);
  await opts.beforeChats?.(purging, db);

  if (db) chatNames = new PgChatNames(db, componentLogger(log, 'Session'));
  const sessionOpts = opts.inUse ? { inUse: opts.inUse } : {};
  const sessions =
    db && chatNames
      ? new PgSessionStore(db, chatNames, componentLogger(log, 'Session'), { ...sessionOpts, run: opts.processId, leaseMs: config.database.leaseMs })
      : FileSessionStore.inWorkspace(ws, componentLogger(log, 'Session'), sessionOpts);
  await sessions.init();
  life.add({
    name: 'sessions',
    close: async ({ drained }) => {
      await sessions.flush();
      // Every turn ended: what derives from the log is written; made durable, the log can go.
      if (drained) await sessions.forgetLog().catch((err: unknown) => log.warn({ err }, 'the session log is kept for the next start'));
      await sessions.close();
    },
  });

  const usage = db
    ? new PgUsageStore(db, config.timezone, componentLogger(log, 'Usage'))
    : SqliteUsageStore.inWorkspace(ws, config.timezone, { log: componentLogger(log, 'Usage') });
  life.add({ name: 'usage', close: () => usage.close() });

  const memory = db ? new PgMemoryService(db, config.memoryScope) : FileMemoryService.inWorkspace(ws, config.memoryScope);
  const pending = db ? new PgPendingWrites(db) : FilePendingWrites.inWorkspace(ws);

  const indexLog = componentLogger(log, 'Index');
  // With DATABASE_URL the rows are the database's; the workspace keeps a cache rebuilt from it when missing.
  const index = db
    ? await PgMemoryIndex.open({ db, log: indexLog, cacheFile: inWorkspace(config, 'memoryIndexCache') })
    : SqliteMemoryIndex.inWorkspace(ws, indexLog);
  life.add({
    name: 'index',
    close: async () => {
      // A /forget's scrub still running ends first (bounded): its held messages are then indexed.
      await Promise.race([index.whenWritable(), new Promise((r) => setTimeout(r, SCRUB_WAIT_MS).unref())]);
      // In the database: what the cache has not written yet is written first.
      if (index instanceof PgMemoryIndex) await index.shutdown();
      else index.close();
    },
  });

  const reminders = db ? await PgReminderStore.open(db) : SqliteReminderStore.inWorkspace(ws, componentLogger(log, 'Reminders'));

  const inbox = db ? new PgInbox(db, componentLogger(log, 'Inbox')) : FileInbox.inWorkspace(ws);
  life.add({ name: 'inbox', close: () => inbox.shutdown() });

  return {
    mode: db ? 'postgres' : 'files',
    database: db,
    runtime,
    sessions,
    memory,
    pending,
    index,
    reminders,
    usage,
    inbox,
    forgetting,
    purging,
    pageToken: db ? new PgKeptValue(db, TOKEN_NAME) : tokenFile(ws),
    why: db ? new PgWhyStore(db) : FileWhyStore.inWorkspace(ws),
    channelState: (provider, owner) => (db ? provider.state?.postgres(db, log, owner ?? loneOwner(config)) : provider.state?.files(ws, log)),
  };
}

/**
 * A channel's stores alone, where `openStores` keeps them, for a command-line tool that works
 * on them while the bot runs (`npm run pair`): with DATABASE_URL the database (migrated), else
 * the workspace. `close` lets go of the connection.
 */
export async function openChannelState<St>(
  config: Config,
  log: Logger,
  provider: ChannelProvider<ChannelSection, St>,
): Promise<{ state: St | undefined; close(): Promise<void> }> {
  const url = config.database.url;
  if (!url) return { state: provider.state?.files(config.workspaceDir, log), close: async () => undefined };
  const db = new Database({ url, poolSize: 2, log: componentLogger(log, 'Database') });
  try {
    await migrate(db, { log: componentLogger(log, 'Database') });
    return { state: provider.state?.postgres(db, log, loneOwner(config)), close: () => db.close() };
  } catch (err) {
    await db.close();
    throw err;
  }
}
