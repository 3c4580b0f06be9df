/**
 * How many reminder messages a chat gets, and when a chat gets none. Two rules, both held in
 * memory by the reminder service (service.ts), which keys them by group: a forum's topics
 * together are one chat here, as for the flood limit and the budget (core/group.ts).
 *
 * - At most REMINDERS_PER_CHAT_PER_HOUR messages per chat in any hour. Reminders due beyond
 *   that are folded into one message listing them (the last message the hour allows); when the
 *   hour's messages are all used, the chat's reminders wait until the oldest of them is an
 *   hour old, then go out folded. A flood of due reminders (fifty set for one minute, a burst
 *   after a long stop) is one message, not fifty.
 * - A chat the channel no longer serves (a group taken off TELEGRAM_ALLOWED_GROUPS, a user whose
 *   approval was revoked) gets nothing: its reminders stay, unclaimed, and are looked at again
 *   every UNSERVED_RECHECK_MS (an approval given back brings them, late).
 *
 * Both are counted since the daemon started: a restart gives a chat a fresh hour.
 */

import { shortTime } from './time.js';
import type { Delivery } from './store.js';

/** How often a chat the channel does not serve is asked about again. */
export const UNSERVED_RECHECK_MS = 10 * 60_000;
const HOUR_MS = 3600_000;

export interface Hold {
  until: number;
  why: 'cap' | 'unserved';
}

/** The split of one chat's due reminders into messages. */
export interface Plan<T> {
  /** Each its own message. */
  single: T[];
  /** Together in one message (empty, or at least two). */
  folded: T[];
}

export class ReminderPace {
  /** Per chat: when its reminder messages of the last hour went out, oldest first. */
  private readonly sent = new Map<string, number[]>();
  private readonly holds = new Map<string, Hold>();

  constructor(readonly perHour: number) {}

  /** Chats held now (their due reminders are not claimed), after dropping the holds that ended. */
  held(now: number): Map<string, Hold> {
    for (const [chat, h] of this.holds) if (h.until <= now) this.holds.delete(chat);
    return this.holds;
  }

  hold(chat: string, hold: Hold): void {
    this.holds.set(chat, hold);
  }

  /** The soonest end of a hold: the service wakes then. */
  nextRelease(): number | undefined {
    let next: number | undefined;
    for (const h of this.holds.values()) next = next === undefined ? h.until : Math.min(next, h.until);
    return next;
  }

  /**
   * Splits `items` (oldest first) into the messages this hour still allows, and counts them as
   * sent. Undefined when the hour allows none: the chat is held until one is free.
   */
  plan<T>(chat: string, items: T[], now: number): Plan<T> | undefined {
    const times = (this.sent.get(chat) ?? []).filter((t) => t > now - HOUR_MS);
    const room = this.perHour - times.length;
    if (room <= 0) {
      this.holds.set(chat, { until: times[0]! + HOUR_MS, why: 'cap' });
      this.sent.set(chat, times);
      return undefined;
    }
    const fits = items.length <= room;
    const single = fits ? items : items.slice(0, room - 1);
    const folded = fits ? [] : items.slice(room - 1);
    const messages = single.length + (folded.length > 0 ? 1 : 0);
    for (let i = 0; i < messages; i++) times.push(now);
    this.sent.set(chat, times);
    // Forget chats whose hour is over, so the map holds only the last hour's.
    if (this.sent.size > 1000) for (const [k, t] of this.sent) if (t.at(-1)! <= now - HOUR_MS) this.sent.delete(k);
    return { single, folded };
  }
}

/** Delivered later than this after its due time (and not just at start) counts as late. */
const LATE_AFTER_MS = 60_000;

/**
 * What the chat gets for one occurrence, or several folded: `⏰ Reminder: …`, a late one
 * saying when it was due (and that the bot was not running, when it was due before the start).
 */
export function reminderText(ds: Delivery[], at: { now: number; startedAt: number; timezone: string; perHour: number; topic: boolean }): string {
  const lateness = (d: Delivery): string | undefined => {
    if (d.dueAt >= at.startedAt && at.now - d.dueAt <= LATE_AFTER_MS) return undefined;
    return `late — it was due ${shortTime(d.dueAt, at.timezone)}${d.dueAt < at.startedAt ? ', while I was not running' : ''}`;
  };
  if (ds.length === 1) {
    const late = lateness(ds[0]!);
    return late ? `⏰ Reminder (${late}): ${ds[0]!.text}` : `⏰ Reminder: ${ds[0]!.text}`;
  }
  const lines = ds.map((d) => {
    const late = lateness(d);
    return `• ${d.text}${late ? ` (${late})` : ''}`;
  });
  const who = at.topic ? 'this group gets at most' : 'this chat gets at most';
  const hour = at.topic ? 'reminder messages an hour, its topics together' : 'reminder messages an hour';
  return [`⏰ ${ds.length} reminders together (${who} ${at.perHour} ${hour}):`, ...lines].join('\n');
}
