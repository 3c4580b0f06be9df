/**
 * The flood limits: at most RATE_LIMIT_PER_MINUTE messages taken in any minute per chat — per
 * group, the forum topics of a group together (core/group.ts), so opening topics does not
 * multiply the limit — and at most MAX_QUEUED_PER_CHAT waiting behind the one being answered in
 * one conversation's queue. The excess never reaches the model; the intake (intake.ts) answers it
 * with one of the lines below. The terminal is the operator's own and is not limited (piped input
 * is how it is scripted).
 */
import { groupOf, isTopic } from '../core/group.js';

const WINDOW_MS = 60_000;

export type LimitVerdict = 'ok' | 'rate' | 'queue';

export class ChatLimits {
  /** Per group (a chat that is no forum topic is its own): when its messages taken in the last minute arrived, oldest first. */
  private readonly taken = new Map<string, number[]>();
  private sweeps = 0;

  constructor(
    private readonly perMinute: number,
    private readonly maxQueued: number,
  ) {}

  /** Decides on a new message of chat `key` with `queued` messages already waiting in its queue; counts it (for its group) when taken. */
  admit(key: string, queued: number, now = Date.now()): LimitVerdict {
    if (queued >= this.maxQueued) return 'queue';
    if (this.perMinute === 0) return 'ok';
    const group = groupOf(key);
    const times = this.recent(group, now);
    if (times.length >= this.perMinute) return 'rate';
    times.push(now);
    this.taken.set(group, times);
    // Now and then forget chats that went quiet, so the map holds only the last minute's.
    if (++this.sweeps % 1_000 === 0) for (const k of [...this.taken.keys()]) this.recent(k, now);
    return 'ok';
  }

  private recent(key: string, now: number): number[] {
    const times = this.taken.get(key) ?? [];
    let drop = 0;
    while (drop < times.length && times[drop]! <= now - WINDOW_MS) drop++;
    const kept = drop > 0 ? times.slice(drop) : times;
    if (kept.length === 0) this.taken.delete(key);
    else if (drop > 0) this.taken.set(key, kept);
    return kept;
  }

  /** The line for a message over the rate, saved in the session without an answer (or a command not run). */
  rateText(key: string, command?: string): string {
    const what = command ? `so I did not run /${command}. Please run it again` : 'so I saved this one without answering it. Please send it again';
    const where = isTopic(key) ? ' in this group (its topics together)' : '';
    return `That is more than ${this.perMinute} messages in a minute${where}, ${what} in a minute if you still need ${command ? 'it' : 'an answer'}.`;
  }

  /** The line for a message refused because too many wait already (it was not kept). */
  /** Over the rate where the message is not kept either (several processes: the accepting one refuses it, docs/cluster.md). */
  refusedText(key: string): string {
    const where = isTopic(key) ? ' in this group (its topics together)' : '';
    return `That is more than ${this.perMinute} messages in a minute${where}, so I did not take this one. Please send it again in a minute.`;
  }

  queueText(): string {
    return `I am still answering your earlier messages (${this.maxQueued} waiting), so I did not take this one. Please send it again once I have replied.`;
  }
}
