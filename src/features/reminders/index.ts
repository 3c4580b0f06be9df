/**
 * Reminders: the model schedules, lists and cancels them (tools.ts), `/reminders` lists and
 * cancels them in the chat (command.ts), `npm run memory -- reminders` from the shell (cli.ts).
 * They are kept in schedules.db (store.ts) and delivered at their time through the chat's
 * channel, in its queue (service.ts; the hourly cap in pace.ts, times in time.ts). The app builds
 * the service, starts it once the channel is up and stops it before the queues drain.
 */
import type { Feature } from '../../turn/feature.js';
import type { ReminderService } from './service.js';
import { createRemindersCommand } from './command.js';
import { createReminderTools } from './tools.js';

export function remindersFeature(deps: { reminders: ReminderService }): Feature {
  return { name: 'reminders', commands: [createRemindersCommand(deps.reminders)], tools: createReminderTools(deps.reminders) };
}
