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
import { ReminderStore } from '../features/reminders/store.js';
import { UsageStore } from '../features/usage/usage.js';
import type { CliIo } from '../core/cli-io.js';

/** What a purge needs of the settings; the pairing is taken back only by a purge that asks (--pairing). */
export function purgeOptions(config: Config, log: Logger): PurgeOptions {
  return {
    workspaceDir: config.workspaceDir,
    memoryScope: config.memoryScope,
    log,
    openReminders: (file) => new ReminderStore(file, log),
    openUsage: (file) => new UsageStore(file, 'UTC', { log }),
    revokePairing: (userId) => FilePairingStore.inWorkspace(config.workspaceDir).revoke(userId),
  };
}

export async function runPurge(chat: { channel: string; chatId: string }, args: string[], config: Config, log: Logger, io: CliIo): Promise<number> {
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
    const id = `${chat.channel}:${chat.chatId}`;
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
