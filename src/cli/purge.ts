/**
 * `npm run memory -- purge --chat CHANNEL:ID [--pairing]`: features/privacy/purge.ts, with the daemon lock
 * held. A group's id takes its forum topics too, and the first line says how many.
 */
import type { Config } from '../config/env.js';
import type { Logger } from '../core/log.js';
import { acquireDaemonLock } from '../storage/daemon-lock.js';
import { finishInterruptedPurges, purgeChat, type PurgeOptions } from '../features/privacy/purge.js';
import { splitTopic } from '../core/group.js';
import { FilePairingStore } from '../channels/telegram/pairing-file.js';
import { SqliteReminderStore } from '../features/reminders/sqlite-store.js';
import { SqliteUsageStore } from '../features/usage/sqlite-usage.js';
import type { CliIo } from '../core/cli-io.js';
import { chatKey, type Chat } from '../core/chat.js';
import { FileSessionStore } from '../sessions/file-store.js';
import { FileInbox } from '../queue/file-inbox.js';
import { FileMemoryService } from '../memory/file-memory.js';
import { SqliteMemoryIndex } from '../index/sqlite-memory-index.js';
import { FileWhyStore } from '../features/why/store.js';

/** What a purge needs of the settings; the pairing is taken back only by a purge that asks (--pairing). */
export function purgeOptions(config: Config, log: Logger): PurgeOptions {
  const ws = config.workspaceDir;
  return {
    workspaceDir: ws,
    log,
    // Not init'ed: with the daemon stopped, purge takes what is kept as it lies (no replay).
    openStores: async () => ({
      sessions: FileSessionStore.inWorkspace(ws, log),
      inbox: FileInbox.inWorkspace(ws),
      memory: FileMemoryService.inWorkspace(ws, config.memoryScope),
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

export async function runPurge(chat: Chat, args: string[], config: Config, log: Logger, io: CliIo): Promise<number> {
  // Purge works on the workspace's stores: with DATABASE_URL the chat's state is in the database,
  // and a purge that found nothing there would say "nothing found" of a chat it never looked at.
  if (config.database.url) {
    io.err('purge: the state is in PostgreSQL (DATABASE_URL), which purge does not reach yet — nothing was deleted (docs/postgres.md, "Not yet").');
    return 1;
  }
  let lock: Awaited<ReturnType<typeof acquireDaemonLock>>;
  try {
    lock = await acquireDaemonLock(config.workspaceDir);
  } catch (err) {
    io.err(`purge: ${(err as Error).message} (the daemon caches sessions, so purge runs only while it is stopped)`);
    return 1;
  }
  try {
    const opts = purgeOptions(config, log);
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
    if (r.deleted.length === 0) io.out(`Nothing of ${id} was found in ${config.workspaceDir}.`);
    else {
      io.out(`Purged ${id}${topics}. Deleted:`);
      for (const d of r.deleted) io.out(`  - ${d}`);
    }
    for (const k of r.kept) io.out(`Not deleted: ${k}`);
    return 0;
  } finally {
    await lock.release();
  }
}
