/**
 * `/reminders` lists this chat's pending reminders, numbered soonest first;
 * `/reminders cancel N` cancels the N-th of that list.
 */
import type { Command } from '../../turn/command.js';
import type { ReminderService } from './service.js';

export function createRemindersCommand(reminders: ReminderService): Command {
  return {
    name: 'reminders',
    description: 'List your pending reminders; /reminders cancel N cancels one',
    // The list is what the chat will be sent anyway; cancelling one changes it for everyone.
    access: (args) => (/^cancel\b/i.test(args) ? 'managers' : 'everyone'),
    async run({ inbound, args }) {
      const pending = await reminders.list(inbound.channel, inbound.chatId);
      if (args === '') {
        if (pending.length === 0) return 'No pending reminders. Ask me, e.g. "remind me tomorrow at 9 to call the dentist".';
        const lines = pending.map((r, i) => `${i + 1}. ${reminders.describe(r)}`);
        return [`⏰ Pending reminders (${reminders.timezone}):`, ...lines, 'Cancel one with /reminders cancel N.'].join('\n');
      }
      const m = /^cancel\s+(\d{1,4})$/i.exec(args);
      if (!m) return `"/reminders ${args}" — use /reminders to list them, or /reminders cancel N (N from the list).`;
      const n = Number(m[1]);
      const target = pending[n - 1];
      if (!target) {
        return pending.length === 0
          ? 'There are no pending reminders to cancel.'
          : `There is no reminder ${n}: you have ${pending.length} pending. Send /reminders to see them.`;
      }
      const cancelled = await reminders.cancel(inbound.channel, inbound.chatId, target.id);
      if (!cancelled) return `Reminder ${n} was just delivered or cancelled. Send /reminders to see what is left.`;
      return `Cancelled reminder ${n}: ${reminders.describe(cancelled)}.`;
    },
  };
}
