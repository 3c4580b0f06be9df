/**
 * Reminders: scheduling (validated), and delivery at the due time through the chat's channel.
 *
 * Delivery of one occurrence, in the chat's dispatcher queue (never in the middle of a turn):
 *   1. claim it in the store (one transaction: a one-time reminder is done, a repeating one
 *      moves to its next time) — from here on it is never claimed again;
 *   2. append it to the session as an assistant message marked with the occurrence (fsynced
 *      session log), and a line to today's note;
 *   3. send it through the channel;
 *   4. mark the occurrence sent.
 * Mark-then-send, so a reminder goes out at most once, like every reply (docs/behaviour.md, "Replies go out
 * at most once"). A kill between 1 and 2 leaves a claim with no session message: it was never
 * sent, and the next start delivers it (late). A kill between 2 and 4 leaves a claim whose
 * message is in the session: it may have gone out, so it is not sent again (logged as
 * uncertain). Due while the daemon was down: delivered once at start, saying when it was due.
 * Several occurrences folded into one message (pace.ts: the chat's hourly cap) follow the same
 * steps together: all claimed, one session message marked with all of them, one send, all
 * marked sent. A chat its channel no longer serves is skipped before anything is claimed.
 */
import type { Logger } from '../../core/log.js';
import type { ErrorCode } from '../../core/errors.js';
import type { SessionStore } from '../../sessions/store.js';
import type { DailyNotes } from '../../memory/daily-notes.js';
import { makeMessage } from '../../sessions/model.js';
import { chatKey } from '../../core/chat.js';
import { groupOf, isTopic } from '../../core/group.js';
import type { Delivery, Reminder, ReminderStore } from './store.js';
import { ReminderPace, reminderText, UNSERVED_RECHECK_MS } from './pace.js';
import { MAX_AHEAD_MS, describeTime, nextAfter, parseAt, parseRepeat, repeatFromString, repeatToString, shortTime, tooFrequent } from './time.js';

export const MAX_PENDING_PER_CHAT = 50;
/** The timer never sleeps longer than this (clock changes, suspended machines). */
const MAX_SLEEP_MS = 60_000;

export type SendFn = (chatId: string, text: string) => Promise<void>;
/** Whether the channel still serves a chat (its access rules); a reminder service cannot import channels. */
export type ServedFn = (chatId: string) => boolean | Promise<boolean>;

/** Default of REMINDERS_PER_CHAT_PER_HOUR. */
export const REMINDERS_PER_CHAT_PER_HOUR = 10;

export interface ReminderDeps {
  store: ReminderStore;
  sessions: SessionStore;
  /** The daily notes' one writer: a delivered reminder gets its line there. */
  notes: DailyNotes;
  timezone: string;
  log: Logger;
  /**
   * Runs a task in the chat's queue (the dispatcher): a delivery never interleaves with a turn.
   * In a cluster, as the chat's holder too: never beside another process's turn of it.
   */
  queue: (key: string, task: () => Promise<void>, chat: { channel: string; chatId: string }) => Promise<void>;
  /** Reminder messages one chat gets per hour at most (REMINDERS_PER_CHAT_PER_HOUR); the rest are folded. */
  perChatPerHour?: number;
  now?: () => number;
  /**
   * Several processes (docs/cluster.md): the store hands over claims a dead process left
   * (ReminderStore.ownedBy), each once, so every claim it gives is this process's to deliver —
   * whenever it was made. Unset: a claim left open is a kill's when made before this start.
   */
  takesOver?: boolean;
  /** With `takesOver`: looks for a dead process's claims at least this often (CLUSTER_LEASE_MS), reminders due or not. */
  lookEveryMs?: number;
}

export type ScheduleResult = { ok: true; reminder: Reminder } | { ok: false; reason: string };

/** The marker a delivered occurrence carries in the session: `<reminder id>@<due ms>`. */
export function occurrenceKey(d: Pick<Delivery, 'reminderId' | 'dueAt'>): string {
  return `${d.reminderId}@${d.dueAt}`;
}

/** True when a session message delivered this occurrence (alone, or folded: the keys space-separated). */
function carries(m: { reminder?: string | undefined }, key: string): boolean {
  return m.reminder?.split(' ').includes(key) === true;
}

/** One line for lists: "Mon 23 Nov 2026, 09:00 — call the dentist (repeats: daily)". */
export function describeReminder(r: Reminder): string {
  return `${shortTime(r.dueAt, r.timezone)} — ${r.text}${r.repeat ? ` (repeats: ${r.repeat})` : ''}`;
}

export class ReminderService {
  readonly now: () => number;
  private senders = new Map<string, SendFn>();
  private served = new Map<string, ServedFn>();
  private readonly pace: ReminderPace;
  /** Chats logged as no longer served (once each, until they are served again). */
  private readonly unservedLogged = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private startedAt = Number.POSITIVE_INFINITY;
  private stopped = false;
  private running: Promise<number> | undefined;
  private again = false;
  /** Counts the calls of `arm` (see there). */
  private arms = 0;
  /** Deliveries queued and not finished (stop waits for them through the dispatcher's drain). */
  private readonly inFlight = new Set<string>();
  /** In a cluster: claims taken over from dead processes and not delivered yet (the store hands each over once). */
  private takenOver: Delivery[] = [];

  constructor(private readonly deps: ReminderDeps) {
    this.now = deps.now ?? Date.now;
    this.pace = new ReminderPace(deps.perChatPerHour ?? REMINDERS_PER_CHAT_PER_HOUR);
  }

  get timezone(): string {
    return this.deps.timezone;
  }

  /**
   * At creation, before any channel starts: a claimed occurrence whose message is already in
   * its session may have been sent before the kill, so it is closed without sending (at most
   * once). Claims without a session message stay open; `start` delivers them.
   */
  async settleClaims(): Promise<void> {
    for (const d of await this.deps.store.claimed()) {
      const session = await this.deps.sessions.getOrCreate(d.channel, d.chatId);
      if (session.messages.some((m) => carries(m, occurrenceKey(d)))) {
        await this.deps.store.finish(d, 'sent', this.now());
        this.deps.log.warn(
          { code: 'reminder.delivery_uncertain' satisfies ErrorCode, session: d.chat, reminder: d.reminderId },
          'a reminder was recorded but the daemon stopped before it was confirmed sent; not sent again (at most once)',
        );
      } else if (this.deps.takesOver) this.takenOver.push(d);
    }
  }

  async schedule(channel: string, chatId: string, input: { at: string; text: string; repeat?: string | undefined }): Promise<ScheduleResult> {
    const now = this.now();
    const tz = this.deps.timezone;
    const text = input.text.trim();
    if (!text) return { ok: false, reason: 'the reminder text is empty' };
    const at = parseAt(input.at);
    if (!at.ok) return at;
    const nowSaid = describeTime(now, tz);
    if (at.ms <= now) return { ok: false, reason: `${describeTime(at.ms, tz)} is in the past (now is ${nowSaid}); ask the user for a future time` };
    if (at.ms - now > MAX_AHEAD_MS)
      return { ok: false, reason: `${describeTime(at.ms, tz)} is more than 5 years ahead; reminders can be set up to 5 years ahead` };
    let repeat: string | null = null;
    if (input.repeat !== undefined && input.repeat.trim() !== '') {
      const r = parseRepeat(input.repeat);
      if (!r.ok) return r;
      const frequent = tooFrequent(r.repeat, tz, at.ms);
      if (frequent) return { ok: false, reason: frequent };
      repeat = repeatToString(r.repeat);
    }
    const chat = chatKey({ channel, chatId });
    // A group's forum topics share its limit (as they share its budget): one member cannot pile
    // up 50 per topic.
    if ((await this.deps.store.countPendingInGroup(groupOf(chat))) >= MAX_PENDING_PER_CHAT) {
      const reason = isTopic(chat)
        ? `this group already has ${MAX_PENDING_PER_CHAT} pending reminders in its topics together (the limit); cancel some first (/reminders in a topic lists that topic's)`
        : `this chat already has ${MAX_PENDING_PER_CHAT} pending reminders (the limit); cancel some first (/reminders lists them)`;
      return { ok: false, reason };
    }
    const reminder = await this.deps.store.add({ chat, channel, chatId, text, dueAt: at.ms, repeat, timezone: tz, createdAt: now });
    this.deps.log.info({ session: chat, reminder: reminder.id, dueAt: new Date(at.ms).toISOString(), repeat }, 'reminder scheduled');
    this.arm();
    return { ok: true, reminder };
  }

  list(channel: string, chatId: string): Promise<Reminder[]> {
    return this.deps.store.pending(chatKey({ channel, chatId }));
  }

  /** Pending reminders counted against MAX_PENDING_PER_CHAT: the chat's, or its group's with all its topics. */
  countPending(channel: string, chatId: string): Promise<number> {
    return this.deps.store.countPendingInGroup(groupOf(chatKey({ channel, chatId })));
  }

  async cancel(channel: string, chatId: string, id: number): Promise<Reminder | undefined> {
    const r = await this.deps.store.cancel(chatKey({ channel, chatId }), id);
    if (r) this.deps.log.info({ session: r.chat, reminder: id }, 'reminder cancelled');
    this.arm();
    return r;
  }

  /** For a purge or "forget": every reminder of the chat and the record of its deliveries go. */
  async deleteChat(channel: string, chatId: string): Promise<number> {
    const n = await this.deps.store.deleteChat(chatKey({ channel, chatId }));
    this.arm();
    return n;
  }

  /** For /forget: this chat's reminders whose text holds the forgotten words. */
  countMatching(channel: string, chatId: string, test: (text: string) => boolean): Promise<number> {
    return this.deps.store.countMatching(chatKey({ channel, chatId }), test);
  }

  async deleteMatching(channel: string, chatId: string, test: (text: string) => boolean): Promise<number> {
    const n = await this.deps.store.deleteMatching(chatKey({ channel, chatId }), test);
    if (n > 0) this.arm();
    return n;
  }

  /** One line for lists: "Mon 23 Nov 2026, 09:00 — call the dentist (daily)". */
  describe(r: Reminder): string {
    return describeReminder(r);
  }

  /**
   * Starts delivering on these channels: what is due (or was left claimed) now, then on time.
   * `served` (per channel): whether a chat is still served; a chat that is not gets nothing.
   */
  async start(senders: Record<string, SendFn>, served: Record<string, ServedFn> = {}): Promise<number> {
    this.senders = new Map(Object.entries(senders));
    this.served = new Map(Object.entries(served));
    this.startedAt = this.now();
    this.stopped = false;
    const n = await this.runDue();
    return n;
  }

  /** Stops the timer; deliveries already queued finish with the dispatcher's drain. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Claims and queues every occurrence due by now (and any claim a kill left open). Resolves
   * when those deliveries have finished. Concurrent calls share one run, plus one more after it.
   */
  runDue(): Promise<number> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = (async () => {
      let total = 0;
      do {
        this.again = false;
        try {
          total += await this.deliverDue();
        } catch (err) {
          // The store did not answer (a database down past its wait): nothing was claimed that
          // is not recorded, so the next run — the timer's, within a minute — picks it up.
          this.deps.log.error({ err }, 'could not read or claim due reminders; trying again shortly');
          break;
        }
      } while (this.again && !this.stopped);
      return total;
    })().finally(() => {
      this.running = undefined;
      this.arm();
    });
    this.running = run;
    return run;
  }

  private async deliverDue(): Promise<number> {
    if (this.stopped) return 0;
    const channels = [...this.senders.keys()];
    const now = this.now();
    // Held, and paced, per group: a forum's topics share REMINDERS_PER_CHAT_PER_HOUR.
    const held = this.pace.held(now);
    // Per chat, oldest first: claims a kill left open, then what is due.
    const chats = new Map<string, Array<Delivery | Reminder>>();
    const add = (chat: string, item: Delivery | Reminder) => {
      const list = chats.get(chat);
      if (list) list.push(item);
      else chats.set(chat, [item]);
    };
    // A claim left open is a kill's only when it was made before this start: one made since is
    // this process's own (in flight, or failed: tried at the next start) or another process's,
    // which is delivering it (a database shared by several processes, docs/postgres.md).
    if (this.deps.takesOver) {
      const wanted = new Set(channels);
      const left = [...this.takenOver.splice(0), ...(await this.deps.store.claimed(channels))];
      for (const d of left) {
        if (this.inFlight.has(occurrenceKey(d))) continue;
        // Held back by the pace, or of a channel not started yet: kept for a later run (the store hands it over only once).
        if (held.has(groupOf(d.chat)) || !wanted.has(d.channel)) this.takenOver.push(d);
        else add(d.chat, d);
      }
    } else
      for (const d of await this.deps.store.claimed(channels))
        if (d.claimedAt < this.startedAt && !this.inFlight.has(occurrenceKey(d)) && !held.has(groupOf(d.chat))) add(d.chat, d);
    for (const r of await this.deps.store.due(now, channels)) if (!held.has(groupOf(r.chat))) add(r.chat, r);
    const work: Array<Promise<void>> = [];
    let occurrences = 0;
    for (const [chat, items] of chats) {
      const { channel, chatId } = items[0]!;
      if (!(await this.serves(chat, channel, chatId, now))) continue;
      const plan = this.pace.plan(groupOf(chat), items, now);
      if (!plan) {
        this.deps.log.info(
          { session: chat, due: items.length, perHour: this.pace.perHour },
          'a chat had its reminder messages for this hour; the rest wait and come together',
        );
        continue;
      }
      // One claim after another, in the plan's order: each is its own transaction.
      const single: Delivery[] = [];
      for (const i of plan.single) single.push(...(await this.claimed(i, now)));
      const folded: Delivery[] = [];
      for (const i of plan.folded) folded.push(...(await this.claimed(i, now)));
      for (const d of single) work.push(this.enqueue([d]));
      if (folded.length > 0) {
        this.deps.log.info(
          { session: chat, folded: folded.length, perHour: this.pace.perHour },
          'more reminders due than a chat gets in an hour; folded into one message',
        );
        work.push(this.enqueue(folded));
      }
      occurrences += single.length + folded.length;
    }
    await Promise.all(work);
    return occurrences;
  }

  /** A claim a kill left open as it is; a due reminder claimed now (undefined: someone else took it). */
  private async claimed(item: Delivery | Reminder, now: number): Promise<Delivery[]> {
    if ('reminderId' in item) return [item];
    const repeat = repeatFromString(item.repeat);
    // A repeating reminder missed several times while the daemon was down is delivered once,
    // and moves on to its first time after now.
    const next = repeat ? nextAfter(repeat, item.timezone, item.dueAt, now) : null;
    const d = await this.deps.store.claim(item, next, now);
    return d ? [d] : [];
  }

  /**
   * Whether the chat's channel still serves it. One that does not is held (its reminders stay,
   * unclaimed) and asked about again later; it is logged once, not at every tick.
   */
  private async serves(chat: string, channel: string, chatId: string, now: number): Promise<boolean> {
    const served = this.served.get(channel);
    let ok = true;
    try {
      ok = served ? await served(chatId) : true;
    } catch (err) {
      // Cannot tell (e.g. the channel could not look the user up): it was served when the reminder was set.
      this.deps.log.warn({ err, session: chat }, 'could not tell whether a chat is still served; delivering its reminders');
    }
    if (ok) {
      this.unservedLogged.delete(chat);
      return true;
    }
    this.pace.hold(groupOf(chat), { until: now + UNSERVED_RECHECK_MS, why: 'unserved' });
    if (!this.unservedLogged.has(chat)) {
      this.unservedLogged.add(chat);
      this.deps.log.warn(
        { session: chat, pending: await this.deps.store.countPending(chat).catch(() => undefined) },
        `the ${channel} channel no longer serves this chat; its reminders are kept but not delivered (npm run memory -- reminders --chat ${chat} lists them)`,
      );
    }
    return false;
  }

  /** Delivers occurrences of one chat in its queue: one message for one, or one folded message for several. */
  private enqueue(ds: Delivery[]): Promise<void> {
    const keys = ds.map(occurrenceKey);
    for (const k of keys) this.inFlight.add(k);
    const first = ds[0]!;
    return this.deps
      .queue(first.chat, () => this.deliver(ds), { channel: first.channel, chatId: first.chatId })
      .catch((err: unknown) =>
        this.deps.log.error(
          { err, session: first.chat, reminders: ds.map((d) => d.reminderId) },
          'a reminder could not be delivered; it stays claimed and is tried at the next start',
        ),
      )
      .finally(() => {
        for (const k of keys) this.inFlight.delete(k);
      });
  }

  private async deliver(all: Delivery[]): Promise<void> {
    const first = all[0]!;
    const send = this.senders.get(first.channel);
    if (!send) return;
    const now = this.now();
    const session = await this.deps.sessions.getOrCreate(first.channel, first.chatId);
    // Recorded in an earlier run that was killed before confirming: may have been sent.
    const recorded = all.filter((d) => session.messages.some((m) => carries(m, occurrenceKey(d))));
    for (const d of recorded) await this.deps.store.finish(d, 'sent', now);
    const ds = all.filter((d) => !recorded.includes(d));
    if (ds.length === 0) return;
    const text = reminderText(ds, { now, startedAt: this.startedAt, timezone: this.deps.timezone, perHour: this.pace.perHour, topic: isTopic(first.chat) });
    // Stamped with the delivery's time: its note line is made from the message, here and in a
    // rebuild from the session log after a crash (features/record/derived.ts).
    const message = makeMessage('assistant', text, { reminder: ds.map(occurrenceKey).join(' '), timestamp: new Date(now).toISOString() });
    const writes = this.deps.sessions.writer(session);
    const release = writes.hold();
    try {
      await writes.append(message);
      try {
        const entry = this.deps.notes.entryOf(message, undefined);
        if (entry) await this.deps.notes.append({ channel: first.channel, chatId: first.chatId }, entry);
      } catch (err) {
        this.deps.log.warn({ err, session: first.chat }, 'could not write the reminder to the daily note; it is in the session');
      }
    } finally {
      release();
    }
    try {
      await send(first.chatId, text);
      for (const d of ds) await this.deps.store.finish(d, 'sent', this.now());
      this.deps.log.info(
        { session: first.chat, reminders: ds.map((d) => d.reminderId), lateMs: Math.max(0, now - first.dueAt) },
        ds.length === 1 ? 'reminder delivered' : 'reminders delivered in one message',
      );
    } catch (err) {
      // Not retried: the channel already re-sends what provably did not arrive.
      for (const d of ds) await this.deps.store.finish(d, 'failed', this.now());
      this.deps.log.error(
        { err, session: first.chat, reminders: ds.map((d) => d.reminderId) },
        'the channel refused a reminder; it is in the session and the note',
      );
    }
  }

  async close(): Promise<void> {
    this.stop();
    await this.deps.store.close();
  }

  /** Sets the timer for the soonest pending reminder (at most MAX_SLEEP_MS ahead). */
  private arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped || this.senders.size === 0 || this.running) return;
    // The store answers later: only the newest arm sets the timer (an older answer may be stale).
    const armed = ++this.arms;
    // Held chats (over their hourly messages, or no longer served) wake the timer when their hold ends.
    const held = this.pace.held(this.now());
    this.deps.store
      .nextDue([...this.senders.keys()], held.size > 0 ? (chat) => held.has(groupOf(chat)) : undefined)
      .catch((err: unknown) => {
        // Not known: look again within MAX_SLEEP_MS.
        this.deps.log.warn({ err }, 'could not read when the next reminder is due; looking again shortly');
        return this.now() + MAX_SLEEP_MS;
      })
      .then((due) => {
        if (armed !== this.arms || this.stopped || this.running) return;
        const release = this.pace.nextRelease();
        const soonest = due === undefined ? release : release === undefined ? due : Math.min(due, release);
        // A claim a dead process left (one that stopped while it waited for a chat, or was killed) is taken up soon.
        const look = this.deps.takesOver && this.deps.lookEveryMs !== undefined ? this.now() + this.deps.lookEveryMs : undefined;
        const next = look === undefined ? soonest : soonest === undefined ? look : Math.min(soonest, look);
        if (next === undefined) return;
        clearTimeout(this.timer);
        const wait = Math.min(Math.max(0, next - this.now()), MAX_SLEEP_MS);
        this.timer = setTimeout(() => {
          this.timer = undefined;
          void this.runDue();
        }, wait);
        this.timer.unref();
      });
  }
}
