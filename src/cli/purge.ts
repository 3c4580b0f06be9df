/**
 * `npm run memory -- purge --chat CHANNEL:ID [--pairing]`: features/privacy/purge.ts, with the daemon lock
 * held. A group's id takes its forum topics too, and the first line says how many.
 */
import type { Config } from '../config/env.js';
import type { Logger } from '../core/log.js';
import { acquireDaemonLock } from '../storage/daemon-lock.js';
import { finishInterruptedPurges, purgeChat, type PurgeOptions, type PurgeRecord } from '../features/privacy/purge.js';
import { splitTopic } from '../core/group.js';
import { FilePairingStore } from '../channels/telegram/pairing-file.js';
import { SqliteReminderStore } from '../features/reminders/sqlite-store.js';
import { SqliteUsageStore } from '../features/usage/sqlite-usage.js';
import type { CliIo } from '../core/cli-io.js';
import { chatKey, type Chat } from '../core/chat.js';
import { FileSessionStore } from '../sessions/file-store.js';
import { FileInbox } from '../queue/file-inbox.js';
import { FileMemoryService } from '../memory/file-memory.js';
import { FilePendingWrites } from '../memory/pending-file.js';
import { SqliteMemoryIndex } from '../index/sqlite-memory-index.js';
import { PgMemoryIndex } from '../index/pg/pg-memory-index.js';
import { PgMemoryService } from '../memory/pg/service.js';
import { PgPendingWrites } from '../memory/pg/pending.js';
import { PgInbox } from '../queue/inbox-pg.js';
import { PgSessionStore } from '../sessions/pg-store.js';
import { PgChatNames } from '../sessions/names-pg.js';
import { PgReminderStore } from '../features/reminders/pg-store.js';
import { PgUsageStore } from '../features/usage/pg-usage.js';
import { PgPairingStore } from '../channels/telegram/pairing-pg.js';
import { PgPrivacyJournal } from '../features/privacy/journal-pg.js';
import { listProcesses } from '../cluster/registry.js';
import { Database } from '../storage/pg/database.js';
import { migrate } from '../storage/pg/migrate.js';
import { componentLogger } from '../core/log.js';
import { errorMessage } from '../core/errors.js';
import { FileWhyStore } from '../features/why/store.js';
import { PgWhyStore } from '../features/why/store-pg.js';

/** What a purge needs of the settings; the pairing is taken back only by a purge that asks (--pairing). */
export function purgeOptions(config: Config, log: Logger, db?: Database): PurgeOptions {
  const ws = config.workspaceDir;
  if (db) return pgPurgeOptions(config, log, db);
  return {
    workspaceDir: ws,
    log,
    // Not init'ed: with the daemon stopped, purge takes what is kept as it lies (no replay).
    openStores: async () => ({
      sessions: FileSessionStore.inWorkspace(ws, log),
      inbox: FileInbox.inWorkspace(ws),
      memory: FileMemoryService.inWorkspace(ws, config.memoryScope),
      pending: FilePendingWrites.inWorkspace(ws),
      index: config.memoryScope === 'chat' ? SqliteMemoryIndex.existing(ws, log) : undefined,
      reminders: SqliteReminderStore.existing(ws, log),
      usage: SqliteUsageStore.existing(ws, 'UTC', { log }),
      why: FileWhyStore.inWorkspace(ws),
    }),
    revokePairing: async (chat) => {
      if (chat.channel !== 'telegram') return { kept: 'pairing (only Telegram chats are paired)' };
      if (await FilePairingStore.inWorkspace(ws).revoke(chat.chatId)) return { deleted: `Telegram pairing of user ${chat.chatId}` };
      return { kept: `pairing: no approval or pending code for user ${chat.chatId}` };
    },
  };
}

/**
 * With DATABASE_URL: the same purge on the database's stores. The index is a cache of the
 * database's rows opened for the purge (a temporary file, rebuilt from the database), whose
 * deletes are written back before the purge ends.
 */
function pgPurgeOptions(config: Config, log: Logger, db: Database): PurgeOptions {
  return {
    workspaceDir: config.workspaceDir,
    log,
    journal: new PgPrivacyJournal<PurgeRecord>(db, 'purging', log),
    openStores: async () => ({
      sessions: new PgSessionStore(db, new PgChatNames(db, log), log),
      inbox: new PgInbox(db, log),
      memory: new PgMemoryService(db, config.memoryScope),
      index: config.memoryScope === 'chat' ? await PgMemoryIndex.open({ db, log }) : undefined,
      reminders: await PgReminderStore.open(db),
      usage: new PgUsageStore(db, 'UTC', log),
      pending: new PgPendingWrites(db),
      why: new PgWhyStore(db),
    }),
    revokePairing: async (chat) => {
      if (chat.channel !== 'telegram') return { kept: 'pairing (only Telegram chats are paired)' };
      if (await new PgPairingStore(db).revoke(chat.chatId)) return { deleted: `Telegram pairing of user ${chat.chatId}` };
      return { kept: `pairing: no approval or pending code for user ${chat.chatId}` };
    },
  };
}

/** With DATABASE_URL: the database, migrated, when no process of the bot is alive on it (they cache sessions and write in the background). */
async function openForPurge(config: Config, log: Logger, io: CliIo): Promise<Database | undefined> {
  const db = new Database({ url: config.database.url!, poolSize: 2, log: componentLogger(log, 'Database'), waitMs: 15_000 });
  try {
    await migrate(db, { log: componentLogger(log, 'Database') });
    const alive = (await listProcesses(db, config.database.leaseMs)).filter((p) => p.alive);
    if (alive.length === 0) return db;
    io.err(
      `purge: ${alive.length} process${alive.length === 1 ? '' : 'es'} of the bot run${alive.length === 1 ? 's' : ''} on this database (${alive.map((p) => `${p.host}:${p.pid}`).join(', ')}): stop ${alive.length === 1 ? 'it' : 'them'} first — nothing was deleted.`,
    );
  } catch (err) {
    io.err(`purge: ${errorMessage(err)} — nothing was deleted.`);
  }
  await db.close();
  return undefined;
}

export async function runPurge(chat: Chat, args: string[], config: Config, log: Logger, io: CliIo): Promise<number> {
  const db = config.database.url ? await openForPurge(config, log, io) : undefined;
  if (config.database.url && !db) return 1;
  let lock: Awaited<ReturnType<typeof acquireDaemonLock>>;
  try {
    lock = await acquireDaemonLock(config.workspaceDir);
  } catch (err) {
    io.err(`purge: ${(err as Error).message} (the daemon caches sessions, so purge runs only while it is stopped)`);
    await db?.close();
    return 1;
  }
  try {
    const opts = purgeOptions(config, log, db);
    // A purge the last run (a kill, Ctrl+C) left half done is finished first.
    for (const left of await finishInterruptedPurges(opts)) {
      io.out(
        left.givenUp
          ? `The purge of ${left.chat} was cut off in two runs in a row, so it was given up: run it again.`
          : `Finished the purge of ${left.chat} that an earlier run began and did not end.`,
      );
    }
    const { revokePairing, ...withoutPairing } = opts;
    const r = await purgeChat(chat, args.includes('--pairing') ? opts : withoutPairing);
    const id = chatKey(chat);
    const n = r.topics.length;
    const topics = n === 0 ? '' : ` and its ${n} forum topic${n === 1 ? '' : 's'} (${r.topics.map((t) => splitTopic(t).threadId ?? t).join(', ')})`;
    if (r.deleted.length === 0) io.out(`Nothing of ${id} was found in ${db ? 'the database' : config.workspaceDir}.`);
    else {
      io.out(`Purged ${id}${topics}. Deleted:`);
      for (const d of r.deleted) io.out(`  - ${d}`);
    }
    for (const k of r.kept) io.out(`Not deleted: ${k}`);
    return 0;
  } finally {
    await lock.release();
    await db?.close();
  }
}
