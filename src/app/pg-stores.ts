/**
 * The state kept in PostgreSQL so far (docs/postgres.md, "What is in PostgreSQL so far"),
 * opened together: one Database (the pool), the migrations applied, and the stores that have a
 * PostgreSQL implementation, ready for the wiring to come. Not used by build.ts yet: DATABASE_URL
 * switches the daemon over once every durable state has its PostgreSQL store, not store by store
 * (half the state in a database and half in files would be neither mode).
 */
import { PgPairingStore } from '../channels/telegram/pairing-pg.js';
import type { PairingOptions } from '../channels/telegram/pairing.js';
import { PgUpdateLog } from '../channels/telegram/update-log-pg.js';
import type { DatabaseConfig } from '../config/database.js';
import { PgRuntimeConfigStore } from '../config/runtime-pg.js';
import { componentLogger, type Logger } from '../core/log.js';
import { PgInbox } from '../queue/inbox-pg.js';
import { PgReminderStore } from '../features/reminders/pg-store.js';
import { PgUsageStore } from '../features/usage/pg-usage.js';
import { PgChatNames } from '../sessions/names-pg.js';
import { Database } from '../storage/pg/database.js';
import { migrate } from '../storage/pg/migrate.js';

export interface PgStores {
  db: Database;
  /** Read, and listening for changes (its `init()` says whether the stored settings are good). */
  runtime: PgRuntimeConfigStore;
  pairing: PgPairingStore;
  /** Not loaded: the channel loads it at its start. */
  updateLog: PgUpdateLog;
  /** Loaded. */
  chatNames: PgChatNames;
  /** The intake journal: the intake reads its unfinished entries at start. */
  inbox: PgInbox;
  /** Reminders: the service settles what a kill left claimed at its start. */
  reminders: PgReminderStore;
  /** Token counts, days in `timezone`; `close` writes what is recorded. */
  usage: PgUsageStore;
  /** Waits for the background writes, then closes every connection. */
  close(): Promise<void>;
}

/** Opens the database of `DATABASE_URL` (`database.url` set), applies the migrations and opens the stores. */
export async function openPgStores(
  database: DatabaseConfig & { url: string },
  log: Logger,
  opts: { pairing?: PairingOptions; timezone?: string } = {},
): Promise<PgStores> {
  const db = new Database({ url: database.url, poolSize: database.poolSize, log: componentLogger(log, 'Database') });
  try {
    await migrate(db, { log: componentLogger(log, 'Database') });
    const runtime = await PgRuntimeConfigStore.open(db, componentLogger(log, 'Config'));
    const chatNames = new PgChatNames(db, log);
    await chatNames.load();
    const inbox = new PgInbox(db, componentLogger(log, 'Inbox'));
    const reminders = await PgReminderStore.open(db);
    // The daemon passes TZ (the days of the budget and the charts); UTC for tools that only move rows.
    const usage = new PgUsageStore(db, opts.timezone ?? 'UTC', componentLogger(log, 'Usage'));
    return {
      db,
      runtime,
      pairing: new PgPairingStore(db, opts.pairing),
      updateLog: new PgUpdateLog(db, componentLogger(log, 'Telegram')),
      chatNames,
      inbox,
      reminders,
      usage,
      close: async () => {
        runtime.close();
        await chatNames.flush();
        await usage.close();
        await inbox.shutdown();
        await db.close();
      },
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}
