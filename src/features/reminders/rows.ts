/**
 * The reminders' rows as both SQL stores keep them (schedules.db, and PostgreSQL's tables of the
 * same columns: migrations/pg/050_reminders.sql), and what they are to callers. PostgreSQL hands
 * its bigints over as text, hence Number() (epoch ms and ids stay far below 2^53).
 */
import type { Delivery, Reminder, ReminderItem } from './store.js';

type Int = number | string;

export interface ReminderRow {
  id: Int;
  chat: string;
  channel: string;
  chat_id: string;
  text: string;
  due_at: Int;
  repeat: string | null;
  timezone: string;
  created_at: Int;
  status?: string;
}

export interface DeliveryRow {
  reminder_id: Int;
  due_at: Int;
  chat: string;
  channel: string;
  chat_id: string;
  text: string;
  repeat: string | null;
  state: Delivery['state'];
  claimed_at: Int;
  sent_at?: Int | null;
}

export const toReminder = (r: ReminderRow): Reminder => ({
  id: Number(r.id),
  chat: r.chat,
  channel: r.channel,
  chatId: r.chat_id,
  text: r.text,
  dueAt: Number(r.due_at),
  repeat: r.repeat,
  timezone: r.timezone,
  createdAt: Number(r.created_at),
});

export const toDelivery = (r: DeliveryRow): Delivery => ({
  reminderId: Number(r.reminder_id),
  dueAt: Number(r.due_at),
  chat: r.chat,
  channel: r.channel,
  chatId: r.chat_id,
  text: r.text,
  repeat: r.repeat,
  state: r.state,
  claimedAt: Number(r.claimed_at),
});

/** The delivery record of a reminder's occurrence `r.dueAt`, claimed at `now`. */
export const claimOf = (r: Reminder, now: number): Delivery => ({
  reminderId: r.id,
  dueAt: r.dueAt,
  chat: r.chat,
  channel: r.channel,
  chatId: r.chatId,
  text: r.text,
  repeat: r.repeat,
  state: 'claimed',
  claimedAt: now,
});

/** A row of either table as a portable item (storage/portable.ts). */
export const reminderItem = (r: ReminderRow): ReminderItem => ({
  type: 'reminder',
  reminder: toReminder(r),
  status: r.status as 'pending' | 'done' | 'cancelled',
});
export const deliveryItem = (r: DeliveryRow): ReminderItem => ({
  type: 'delivery',
  delivery: toDelivery(r),
  sentAt: r.sent_at === null || r.sent_at === undefined ? null : Number(r.sent_at),
});

/** The columns of both tables in the order the INSERTs of `load` name them, from an item. */
export const REMINDER_COLUMNS = 'id, chat, channel, chat_id, text, due_at, repeat, timezone, created_at, status';
export const DELIVERY_COLUMNS = 'reminder_id, due_at, chat, channel, chat_id, text, repeat, state, claimed_at, sent_at';
export function reminderValues(i: Extract<ReminderItem, { type: 'reminder' }>): unknown[] {
  const r = i.reminder;
  return [r.id, r.chat, r.channel, r.chatId, r.text, r.dueAt, r.repeat, r.timezone, r.createdAt, i.status];
}
export function deliveryValues(i: Extract<ReminderItem, { type: 'delivery' }>): unknown[] {
  const d = i.delivery;
  return [d.reminderId, d.dueAt, d.chat, d.channel, d.chatId, d.text, d.repeat, d.state, d.claimedAt, i.sentAt];
}
