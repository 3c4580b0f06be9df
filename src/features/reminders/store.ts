/**
 * The reminders store: what is scheduled per chat (pending → done | cancelled; a repeating one
 * stays pending and its due time moves on) and a record per occurrence being or having been
 * delivered. Callers — the reminder service, its tools and `/reminders`, `npm run memory --
 * reminders`, /forget and purge — see only this interface; today's implementation is its own
 * SQLite file (sqlite-store.ts). What any implementation must do is stated as tests:
 * test/features/reminders/store.contract.ts.
 *
 * The promise the service builds on is the claim: an occurrence is claimed once only — by this
 * process or another, before a kill or after it — and a claim survives a kill (the next start
 * finds it among `claimed`), so a reminder goes out at most once (service.ts).
 */

export interface Reminder {
  id: number;
  /** Session key `channel:chatId`. */
  chat: string;
  channel: string;
  chatId: string;
  text: string;
  /** Next time it fires (epoch ms). */
  dueAt: number;
  /** `daily`, `weekly`, a cron expression, or null for once. */
  repeat: string | null;
  timezone: string;
  createdAt: number;
}

export interface Delivery {
  reminderId: number;
  dueAt: number;
  chat: string;
  channel: string;
  chatId: string;
  text: string;
  repeat: string | null;
  state: 'claimed' | 'sent' | 'failed';
  claimedAt: number;
}

export interface ReminderStore {
  /** Schedules a reminder (pending); it gets its id. */
  add(r: Omit<Reminder, 'id'>): Reminder;
  /** This chat's pending reminders, soonest first. */
  pending(chat: string): Reminder[];
  countPending(chat: string): number;
  /**
   * Pending reminders of a group and its forum topics together (`group`: a group's key, see
   * core/group.ts); a private chat is its own group.
   */
  countPendingInGroup(group: string): number;
  /** Cancels one of this chat's pending reminders; undefined when there is no such pending one. */
  cancel(chat: string, id: number): Reminder | undefined;
  /** Pending reminders due at or before `at` on these channels, oldest first. */
  due(at: number, channels: string[]): Reminder[];
  /** The soonest due time of a pending reminder on these channels, leaving out the chats `skip` names (held ones). */
  nextDue(channels: string[], skip?: (chat: string) => boolean): number | undefined;
  /**
   * Claims the occurrence `r.dueAt` for delivery, at once: a one-time reminder becomes done, a
   * repeating one moves on to `next`, and a delivery is recorded. Returns the delivery, or
   * undefined when someone else claimed or cancelled it first.
   */
  claim(r: Reminder, next: number | null, now: number): Delivery | undefined;
  /** Occurrences claimed but not finished (a kill in between), on these channels (all when omitted). */
  claimed(channels?: string[]): Delivery[];
  /** The occurrence was sent (or the channel refused it): it is no longer `claimed`. */
  finish(d: Pick<Delivery, 'reminderId' | 'dueAt'>, state: 'sent' | 'failed', at: number): void;
  /** Delivered occurrences of a chat (tests, debugging). */
  deliveries(chat: string): Delivery[];
  /** Every chat with reminders or delivery records (purge finds a group's forum topics among them). */
  chats(): string[];
  /** Removes every reminder and delivery record of a chat, leaving no byte of them (purge, forget); returns how many reminders. */
  deleteChat(chat: string): number;
  /** This chat's reminders (any status) whose text `test` accepts, with their delivery records: gone, no byte left. */
  deleteMatching(chat: string, test: (text: string) => boolean): number;
  /** How many of this chat's reminders (any status) have a text `test` accepts. */
  countMatching(chat: string, test: (text: string) => boolean): number;
  close(): void;
}
