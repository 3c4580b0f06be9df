/**
 * `npm run memory -- reminders --chat CHANNEL:ID [cancel N|all]`: one chat's pending reminders,
 * numbered soonest first as `/reminders` numbers them, and cancelled by number or all at once.
 * For a chat the bot no longer serves (a group taken off TELEGRAM_ALLOWED_GROUPS, a revoked
 * user): its reminders are kept, undelivered, and nobody in it can send `/reminders` any more.
 *
 * Runs with the daemon running or stopped, unlike purge: reminders live only in schedules.db
 * (SQLite, WAL, every change one transaction), the daemon keeps none of them in memory — it
 * reads what is due at each tick and claims an occurrence only while its row is still
 * pending — so a cancel from here is seen at its next tick and never undone or doubled.
 * Purge needs the daemon stopped because sessions are cached in memory; reminders are not.
 */
import type { Config } from '../../config/env.js';
import type { Logger } from '../../core/log.js';
import { SqliteReminderStore } from './sqlite-store.js';
import { describeReminder } from './service.js';
import type { Reminder } from './store.js';
import type { CliIo } from '../../core/cli-io.js';
import { chatKey, type Chat } from '../../core/chat.js';

export async function runReminders(chat: Chat, chatArg: string, args: string[], config: Config, log: Logger, io: CliIo): Promise<number> {
  const at = args.indexOf('cancel');
  const which = at >= 0 ? args[at + 1] : undefined;
  if (at >= 0 && !(which === 'all' || /^\d{1,4}$/.test(which ?? ''))) {
    io.err(`reminders ... cancel takes a number from the list or "all": npm run memory -- reminders --chat ${chatArg} cancel 2`);
    return 2;
  }
  const store = SqliteReminderStore.inWorkspace(config.workspaceDir, log);
  try {
    const key = chatKey(chat);
    const pending = await store.pending(key);
    if (at < 0) {
      if (pending.length === 0) {
        io.out(`No pending reminders for ${chatArg}.`);
        return 0;
      }
      io.out(`Pending reminders of ${chatArg} (${pending.length}):`);
      pending.forEach((r, i) => io.out(`  ${i + 1}. ${describeReminder(r)}`));
      io.out(`Cancel with: npm run memory -- reminders --chat ${chatArg} cancel N (or all)`);
      return 0;
    }
    const targets = which === 'all' ? pending : pending.slice(Number(which) - 1, Number(which));
    if (targets.length === 0) {
      io.err(
        pending.length === 0
          ? `${chatArg} has no pending reminders.`
          : `There is no reminder ${which}: ${chatArg} has ${pending.length} pending (list them without "cancel").`,
      );
      return 1;
    }
    const cancelled: Reminder[] = [];
    for (const r of targets) {
      const c = await store.cancel(key, r.id);
      if (c) cancelled.push(c);
    }
    for (const r of cancelled) io.out(`Cancelled: ${describeReminder(r)}`);
    if (cancelled.length < targets.length) io.out(`${targets.length - cancelled.length} were delivered or cancelled meanwhile.`);
    return 0;
  } finally {
    await store.close();
  }
}
