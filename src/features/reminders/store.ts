/**
 * The reminders store: what is scheduled per chat (pending → done | cancelled; a repeating one
 * stays pending and its due time moves on) and a record per occurrence being or having been
 * delivered. Callers — the reminder service, its tools and `/reminders`, `npm run memory --
 * reminders`, /forget and purge — see only this interface; today's implementation is its own
 * SQLite file (sqlite-store.ts), or PostgreSQL with DATABASE_URL (pg-store.ts). Every call
 * answers a promise, since a database elsewhere cannot answer at once; the SQLite file's are
 * resolved already. What any implementation must do is stated as tests:
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
  /**
   * Several processes on one database (docs/cluster.md): claims are recorded as this process's
   * (its id in the cluster), and `claimed` hands over only claims whose process is no longer
   * alive — each to one process, which delivers it. Files have one process: not there.
   */
  ownedBy?(process: string, leaseMs: number): void;
  /** Schedules a reminder (pending); it gets its id. */
  add(r: Omit<Reminder, 'id'>): Promise<Reminder>;
  /** This chat's pending reminders, soonest first. */
  pending(chat: string): Promise<Reminder[]>;
  countPending(chat: string): Promise<number>;
  /**
   * Pending reminders of a group and its forum topics together (`group`: a group's key, see
   * core/group.ts); a private chat is its own group.
   */
  countPendingInGroup(group: string): Promise<number>;
  /** Cancels one of this chat's pending reminders; undefined when there is no such pending one. */
  cancel(chat: string, id: number): Promise<Reminder | undefined>;
  /** Pending reminders due at or before `at` on these channels, oldest first. */
  due(at: number, channels: string[]): Promise<Reminder[]>;
  /** The soonest due time of a pending reminder on these channels, leaving out the chats `skip` names (held ones). */
  nextDue(channels: string[], skip?: (chat: string) => boolean): Promise<number | undefined>;
  /**
   * Claims the occurrence `r.dueAt` for delivery, at once: a one-time reminder becomes done, a
   * repeating one moves on to `next`, and a delivery is recorded. Returns the delivery, or
   * undefined when someone else claimed or cancelled it first.
   */
  claim(r: Reminder, next: number | null, now: number): Promise<Delivery | undefined>;
  /** Occurrences claimed but not finished (a kill in between), on these channels (all when omitted). */
  claimed(channels?: string[]): Promise<Delivery[]>;
  /** The occurrence was sent (or the channel refused it): it is no longer `claimed`. */
  finish(d: Pick<Delivery, 'reminderId' | 'dueAt'>, state: 'sent' | 'failed', at: number): Promise<void>;
  /** Delivered occurrences of a chat (tests, debugging). */
  deliveries(chat: string): Promise<Delivery[]>;
  /** Every chat with reminders or delivery records (purge finds a group's forum topics among them). */
  chats(): Promise<string[]>;
  /** Removes every reminder and delivery record of a chat, leaving no byte of them (purge, forget); returns how many reminders. */
  deleteChat(chat: string): Promise<number>;
  /** This chat's reminders (any status) whose text `test` accepts, with their delivery records: gone, no byte left. */
  deleteMatching(chat: string, test: (text: string) => boolean): Promise<number>;
  /** How many of this chat's reminders (any status) have a text `test` accepts. */
  countMatching(chat: string, test: (text: string) => boolean): Promise<number>;
  close(): Promise<void>;
}

/**
 * One item of the reminders as they move between the embedded files and PostgreSQL
 * (storage/portable.ts): each reminder with its status, each delivery record with when it was
 * finished, and the last id handed out — ids are kept, as a session's delivered message names
 * its occurrence by reminder id (service.ts), and an id is never handed out twice.
 */
export type ReminderItem =
  | { type: 'reminder'; reminder: Reminder; status: 'pending' | 'done' | 'cancelled' }
  | { type: 'delivery'; delivery: Delivery; sentAt: number | null }
  | { type: 'lastId'; id: number };
