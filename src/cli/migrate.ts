/**
 * `npm run memory -- migrate --to postgres|files [--force]`: copies every durable state of the
 * workspace (WORKSPACE_DIR, every chat) into the database of DATABASE_URL, or back. It knows
 * nothing of what a store holds: each store in STORES gives its two implementations, and both
 * move their items through `Portable` (storage/portable.ts). The source is only read, so a move
 * cut off (or refused) loses nothing; the target is written only when every target store is
 * empty, or with --force, which empties each one first.
 *
 * Like purge, it runs only while the daemon is stopped (the daemon lock is held meanwhile): the
 * daemon caches state and writes in the background. The intake journal does not move: a
 * message it holds open (the daemon stopped before answering it) stops the move instead, until
 * a start in the source mode has answered it — docs/postgres.md, "Moving in and out".
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/env.js';
import { FileRuntimeConfigStore } from '../config/runtime.js';
import { PgRuntimeConfigStore } from '../config/runtime-pg.js';
import { FilePairingStore } from '../channels/telegram/pairing-file.js';
import { PgPairingStore } from '../channels/telegram/pairing-pg.js';
import { FileUpdateLog } from '../channels/telegram/update-log.js';
import { PgUpdateLog } from '../channels/telegram/update-log-pg.js';
import { FileChatNames } from '../sessions/names.js';
import { PgChatNames } from '../sessions/names-pg.js';
import { FileSessionStore } from '../sessions/file-store.js';
import { PgSessionStore } from '../sessions/pg-store.js';
import { SqliteIndexPortable } from '../index/portable-index.js';
import { PgIndexPortable } from '../index/pg/portable-pg.js';
import { FileMemoryService } from '../memory/file-memory.js';
import { PgMemoryService } from '../memory/pg/service.js';
import { FilePendingWrites } from '../memory/pending-file.js';
import { PgPendingWrites } from '../memory/pg/pending.js';
import { SqliteReminderStore } from '../features/reminders/sqlite-store.js';
import { PgReminderStore } from '../features/reminders/pg-store.js';
import { SqliteUsageStore } from '../features/usage/sqlite-usage.js';
import { PgUsageStore } from '../features/usage/pg-usage.js';
import { FileWhyStore } from '../features/why/store.js';
import { PgWhyStore } from '../features/why/store-pg.js';
import { FileInbox } from '../queue/file-inbox.js';
import { PgInbox } from '../queue/inbox-pg.js';
import type { CliIo } from '../core/cli-io.js';
import { errorMessage } from '../core/errors.js';
import { componentLogger, type Logger } from '../core/log.js';
import { acquireDaemonLock } from '../storage/daemon-lock.js';
import { Database } from '../storage/pg/database.js';
import { migrate } from '../storage/pg/migrate.js';
import type { Portable } from '../storage/portable.js';
import { WORKSPACE_FILES } from '../storage/workspace-files.js';

/** What a store's implementation is opened on. */
export interface MoveContext {
  workspaceDir: string;
  /** MEMORY_SCOPE (the memory's items carry their scope: it only names how the stores are opened). */
  memoryScope: 'chat' | 'global';
  db: Database;
  log: Logger;
}

/** A store's implementation, opened for the move; `close` lets go of what it holds. */
type Opened = Portable<unknown> & { close?(): unknown };

/** One store: its file (or SQLite) implementation and its PostgreSQL one, with the same items. */
export interface StorePair {
  files(c: MoveContext): Opened | Promise<Opened>;
  postgres(c: MoveContext): Opened | Promise<Opened>;
}

/**
 * Every durable state that moves, in the order moved. A store that gets its PostgreSQL
 * implementation is one line here.
 */
export const STORES: StorePair[] = [
  { files: (c) => new FileRuntimeConfigStore(c.workspaceDir), postgres: (c) => PgRuntimeConfigStore.open(c.db, c.log) },
  { files: (c) => FilePairingStore.inWorkspace(c.workspaceDir), postgres: (c) => new PgPairingStore(c.db) },
  // Moved so that the first start in the other mode does not handle again the last batch of
  // updates, which Telegram sends again (the daemon confirms a batch only with its next poll).
  { files: (c) => FileUpdateLog.inWorkspace(c.workspaceDir, c.log).portable(), postgres: (c) => new PgUpdateLog(c.db, c.log).portable() },
  {
    files: (c) => new FileChatNames(path.join(c.workspaceDir, WORKSPACE_FILES.chatNames), c.log).portable(),
    postgres: (c) => new PgChatNames(c.db, c.log).portable(),
  },
  { files: (c) => SqliteIndexPortable.inWorkspace(c.workspaceDir, c.log), postgres: (c) => new PgIndexPortable(c.db) },
  // The chats' names move above, through their own store (the file session store keeps them beside the sessions).
  {
    files: (c) => FileSessionStore.inWorkspace(c.workspaceDir, c.log),
    postgres: (c) => new PgSessionStore(c.db, new PgChatNames(c.db, c.log), c.log),
  },
  { files: (c) => FileMemoryService.inWorkspace(c.workspaceDir, c.memoryScope), postgres: (c) => new PgMemoryService(c.db, c.memoryScope) },
  { files: (c) => FilePendingWrites.inWorkspace(c.workspaceDir), postgres: (c) => new PgPendingWrites(c.db) },
  { files: (c) => SqliteReminderStore.inWorkspace(c.workspaceDir, c.log), postgres: (c) => PgReminderStore.open(c.db) },
  // Days are stored as YYYY-MM-DD already: the time zone only names which day a new call falls on.
  { files: (c) => SqliteUsageStore.inWorkspace(c.workspaceDir, 'UTC', { log: c.log }), postgres: (c) => new PgUsageStore(c.db, 'UTC', c.log) },
  { files: (c) => FileWhyStore.inWorkspace(c.workspaceDir), postgres: (c) => new PgWhyStore(c.db) },
];

const TARGETS = ['postgres', 'files'] as const;
type Target = (typeof TARGETS)[number];

/** How long the command waits for an unreachable database before it gives up (the daemon waits longer). */
const WAIT_MS = 15_000;

export async function runMigrate(
  args: string[],
  config: Config,
  log: Logger,
  io: CliIo,
  opts: { stores?: readonly StorePair[]; waitMs?: number } = {},
): Promise<number> {
  const stores = opts.stores ?? STORES;
  const i = args.indexOf('--to');
  const to = i >= 0 ? args[i + 1] : undefined;
  if (!TARGETS.includes(to as Target)) {
    io.err(
      `migrate: say where to: --to postgres (the workspace into the database) or --to files (the database into the workspace)${to ? `, not "${to}"` : ''}`,
    );
    return 2;
  }
  const unknown = args.filter((a, k) => a.startsWith('--') && a !== '--to' && a !== '--force' && args[k - 1] !== '--to');
  if (unknown.length > 0) {
    io.err(`migrate: unknown option ${unknown[0]} (known: --to postgres|files, --force)`);
    return 2;
  }
  const url = config.database.url;
  if (!url) {
    io.err('migrate: DATABASE_URL is not set: set it (in .env or the environment) to the database to move into or out of');
    return 2;
  }
  const force = args.includes('--force');
  const ws = config.workspaceDir;
  if (to === 'postgres' && !existsSync(ws)) {
    io.err(`migrate: ${ws} does not exist: set WORKSPACE_DIR to the workspace to move`);
    return 2;
  }
  let lock: Awaited<ReturnType<typeof acquireDaemonLock>>;
  try {
    lock = await acquireDaemonLock(ws);
  } catch (err) {
    io.err(`migrate: ${errorMessage(err)} (stop it first: the daemon caches state and writes it in the background)`);
    return 1;
  }
  const db = new Database({ url, poolSize: config.database.poolSize, log: componentLogger(log, 'Database'), waitMs: opts.waitMs ?? WAIT_MS });
  const opened: Array<{ source: Opened; target: Opened }> = [];
  const where = to === 'postgres' ? 'the database' : ws;
  let writing = false;
  try {
    await migrate(db, { log: componentLogger(log, 'Database') });
    const c: MoveContext = { workspaceDir: ws, memoryScope: config.memoryScope, db, log };
    const left = await openJournal(to as Target, c).unfinished();
    if (left.entries.length > 0) {
      const n = left.entries.length;
      io.err(
        `migrate: the intake journal holds ${n} message${n === 1 ? '' : 's'} not yet answered: start the bot as it is now (${to === 'postgres' ? 'files' : 'PostgreSQL'}) until they are, stop it, and migrate again. Nothing was written.`,
      );
      return 1;
    }
    for (const pair of stores) {
      const [source, target] = to === 'postgres' ? [pair.files(c), pair.postgres(c)] : [pair.postgres(c), pair.files(c)];
      opened.push({ source: await source, target: await target });
    }
    const full: string[] = [];
    for (const { target } of opened) if (!(await target.isEmpty())) full.push(target.portableName);
    if (full.length > 0 && !force) {
      io.err(`migrate: ${where} already holds ${full.join(', ')}: nothing was written. Run again with --force to replace what it holds.`);
      return 1;
    }
    io.out(
      `Copying ${to === 'postgres' ? `${ws} into the database` : `the database into ${ws}`}${full.length > 0 ? ` (--force: replacing ${full.join(', ')})` : ''}:`,
    );
    writing = true;
    for (const { source, target } of opened) {
      if (force) await target.clear();
      let given = 0;
      const counted = async function* () {
        for await (const item of source.dump()) {
          given++;
          yield item;
        }
      };
      const kept = await target.load(counted());
      io.out(
        `  ${target.portableName}: ${kept} item${kept === 1 ? '' : 's'}${kept === given ? '' : ` (of ${given}; see docs/postgres.md, "Moving in and out")`}`,
      );
    }
    io.out(`Done. ${to === 'postgres' ? ws : 'The database'} is left as it was.`);
    return 0;
  } catch (err) {
    const after = writing ? `; what was written to ${where} may be partial: run again with --force once the cause is fixed` : ': nothing was written';
    io.err(`migrate: ${errorMessage(err)}. The source was not changed${after}.`);
    return 1;
  } finally {
    for (const { source, target } of opened) {
      await source.close?.();
      await target.close?.();
    }
    await db.close().catch(() => undefined);
    await lock.release();
  }
}

/** The source's intake journal: the move's check that no message waits in it. */
function openJournal(to: Target, c: MoveContext): { unfinished: FileInbox['unfinished'] } {
  return to === 'postgres' ? FileInbox.inWorkspace(c.workspaceDir) : new PgInbox(c.db, c.log);
}
