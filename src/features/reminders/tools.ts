/**
 * Tools for reminders: schedule_message, list_scheduled, cancel_scheduled. Each acts on the
 * chat the turn belongs to only (a reminder id of another chat is "not found"). Refusals (past,
 * too far ahead, unreadable time, too many pending) come back as text saying why, so the model
 * can ask the user again. Results state the time in the user's zone, for the confirmation.
 */
import type { ReminderService } from './service.js';
import { MAX_PENDING_PER_CHAT } from './service.js';
import { describeTime, isoIn } from './time.js';
import { isTopic } from '../../core/group.js';
import { chatKey } from '../../core/chat.js';
import type { Tool, ToolContext } from '../../tools/types.js';

const chatOf = (ctx: ToolContext) => ctx.chat;

export function createReminderTools(reminders: ReminderService): Tool<any>[] {
  const tz = reminders.timezone;

  const schedule: Tool<{ at: string; text: string; repeat?: string }> = {
    name: 'schedule_message',
    once: true,
    // Short: tool definitions are sent with every request.
    description: `Send "text" to this chat at "at" (a reminder). User's time zone: ${tz}; get_current_time resolves "tomorrow at 9".`,
    parameters: {
      type: 'object',
      properties: {
        at: { type: 'string', maxLength: 64, description: 'ISO 8601 with offset, e.g. 2026-11-23T09:00:00+01:00' },
        text: { type: 'string', minLength: 1, maxLength: 2000 },
        repeat: { type: 'string', maxLength: 100, description: 'daily, weekly or 5-field cron' },
      },
      required: ['at', 'text'],
      additionalProperties: false,
    },
    async execute({ at, text, repeat }, ctx) {
      const { channel, chatId } = chatOf(ctx);
      const r = await reminders.schedule(channel, chatId, { at, text, repeat });
      if (!r.ok) return `Error: not scheduled — ${r.reason}.`;
      const rem = r.reminder;
      const pending = await reminders.countPending(channel, chatId);
      const where = isTopic(chatKey({ channel, chatId })) ? 'This group (its topics together) has' : 'This chat has';
      return [
        `Scheduled reminder #${rem.id} for ${describeTime(rem.dueAt, tz)} [${isoIn(rem.dueAt, tz)}]${rem.repeat ? `, repeating ${rem.repeat}` : ''}: "${rem.text}".`,
        `Now is ${describeTime(reminders.now(), tz)}. ${where} ${pending} pending reminder${pending === 1 ? '' : 's'} (limit ${MAX_PENDING_PER_CHAT}). Tell the user the time in words.`,
      ].join('\n');
    },
  };

  const list: Tool<Record<string, never>> = {
    name: 'list_scheduled',
    description: 'List pending reminders of this chat.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    async execute(_args, ctx) {
      const { channel, chatId } = chatOf(ctx);
      const all = await reminders.list(channel, chatId);
      if (all.length === 0) return 'No pending reminders in this chat.';
      return all.map((r) => `#${r.id} ${isoIn(r.dueAt, tz)} (${describeTime(r.dueAt, tz)})${r.repeat ? ` repeat ${r.repeat}` : ''}: ${r.text}`).join('\n');
    },
  };

  const cancel: Tool<{ id: number }> = {
    name: 'cancel_scheduled',
    once: true,
    access: 'managers',
    description: 'Cancel a pending reminder by id.',
    parameters: {
      type: 'object',
      properties: { id: { type: 'integer', minimum: 1 } },
      required: ['id'],
      additionalProperties: false,
    },
    async execute({ id }, ctx) {
      const { channel, chatId } = chatOf(ctx);
      const r = await reminders.cancel(channel, chatId, id);
      if (!r) return `Error: there is no pending reminder #${id} in this chat (list_scheduled shows them).`;
      return `Cancelled reminder #${r.id} (${describeTime(r.dueAt, tz)}): "${r.text}".`;
    },
  };

  return [schedule, list, cancel];
}
