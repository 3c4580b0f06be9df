/**
 * /stop: what a chat has under way — the message being answered and the ones waiting behind it
 * in its queue — and stopping it. The intake (intake.ts) handles /stop as soon as it arrives,
 * outside the chat's queue (it must not wait behind the turn it stops), and asks `stop` here:
 *
 * - the running turn is stopped through its own AbortController, the one TURN_TIMEOUT_MS uses
 *   (turn-run.ts): its LLM call and tools are aborted and it saves nothing more but the text
 *   streamed so far, marked (`stoppedText`);
 * - every waiting message is marked: when its turn in the queue comes it is saved in the
 *   session unanswered (a command is not run) and its journal entry closed, without a reply;
 * - an answer already complete (being sent, or its notes being written) is left alone.
 *
 * Several processes (docs/cluster.md): a chat another process took from this one (its claim was
 * renewed too late) is handed over quietly instead (`handOver`): the running turn is aborted the
 * same way but saves and sends nothing, the waiting messages are dropped unsaved, and their
 * journal entries stay open — the process holding the chat now runs them. The user sees no
 * "Stopped" note and the session no second copy of a message.
 *
 * In a group anyone may /stop, but a member stops only what is theirs: the answer to their own
 * message and their own waiting messages. The bot's owners (and group admins where
 * GROUP_ADMINS_MANAGE=on) stop everything of the chat.
 *
 * A /stop that did nothing ("Nothing to stop.", someone else's answer, one already complete) is
 * answered once per chat a minute; further ones are silent. /stop skips the flood limits (it is
 * the way out of a full queue), so without this a member's 150 /stop would be 150 bot messages,
 * and Telegram (about 20 a minute per group) would hold back the chat's real answers for minutes.
 */
import type { Role } from '../core/message.js';
import { isManager } from '../turn/command.js';

/** What /stop keeps of an unfinished answer: its text so far and the marker. */
export const STOPPED_MARK = '… [stopped]';
/** The assistant message a turn stopped before any text leaves in the session. */
export const STOPPED_EMPTY = '[stopped before answering]';

/** The session's (and the chat's) copy of an answer stopped after `partial` was written. */
export function stoppedText(partial: string): string {
  return partial.trim() ? `${partial.trimEnd()} ${STOPPED_MARK}` : STOPPED_EMPTY;
}

/** One message of a chat, from the moment it is queued until it is settled. */
export class StopHandle {
  /** Marked by /stop before it ran: saved unanswered when its turn comes. */
  stopped = false;
  /** Its chat went to another process before it ran: dropped unsaved, its journal entry left open (`handOver`). */
  handedOver = false;
  /**
   * Set while its answer is being written: stops it (saying whether text was kept), or says it
   * was already complete. `quietly`: handed over (nothing of it is sent or saved).
   */
  stopTurn: ((quietly?: boolean) => 'stopped' | 'stopped-empty' | 'complete') | undefined;
  /** The command it turned out to be (commands run to their end: they are not stopped). */
  command: string | undefined;

  constructor(readonly userId: string) {}
}

export interface StopOutcome {
  /** The running answer: stopped (with or without text kept), already complete, someone else's, or none. */
  turn: 'stopped' | 'stopped-empty' | 'complete' | 'not-yours' | 'none';
  /** Waiting messages marked to be saved unanswered. */
  skipped: number;
  /** A command being run (it is not stopped). */
  command: string | undefined;
}

/** After a /stop that did nothing was answered in a chat, further ones there are silent this long. */
export const IDLE_STOP_QUIET_MS = 60_000;

export class ChatStops {
  /** Per chat (session key), its messages in queue order; the first may be running. */
  private readonly chats = new Map<string, StopHandle[]>();
  /** Per chat, until when a /stop that did nothing gets no reply. */
  private readonly quietUntil = new Map<string, number>();

  /** `adminsManage`: GROUP_ADMINS_MANAGE, for the wording only (roles come with the message). */
  constructor(
    private readonly adminsManage = false,
    private readonly now: () => number = Date.now,
  ) {}

  /** A message of `key` is queued. */
  enter(key: string, userId: string): StopHandle {
    const handle = new StopHandle(userId);
    const list = this.chats.get(key) ?? [];
    list.push(handle);
    this.chats.set(key, list);
    return handle;
  }

  /** Its handling ended (settled). */
  leave(key: string, handle: StopHandle): void {
    const list = this.chats.get(key)?.filter((h) => h !== handle) ?? [];
    if (list.length > 0) this.chats.set(key, list);
    else this.chats.delete(key);
  }

  /** /stop from `by` in chat `key`: stops what they may stop, and says what it did. */
  stop(key: string, by: { userId: string; role: Role | undefined }): StopOutcome {
    const manager = isManager(by.role ?? 'member');
    const out: StopOutcome = { turn: 'none', skipped: 0, command: undefined };
    for (const h of this.chats.get(key) ?? []) {
      const mine = manager || h.userId === by.userId;
      if (h.stopTurn) {
        if (!mine) out.turn = 'not-yours';
        else out.turn = h.stopTurn();
      } else if (h.command !== undefined) {
        out.command = h.command;
      } else if (mine && !h.stopped) {
        h.stopped = true;
        out.skipped++;
      }
    }
    return out;
  }

  /**
   * The chat `key` was taken over by another process (see the top): its running turn is aborted
   * quietly unless its answer is complete, and every message waiting is dropped. Returns what
   * it did, for the log.
   */
  handOver(key: string): { turn: 'handed-over' | 'complete' | 'none'; dropped: number } {
    const out: { turn: 'handed-over' | 'complete' | 'none'; dropped: number } = { turn: 'none', dropped: 0 };
    for (const h of this.chats.get(key) ?? []) {
      if (h.stopTurn) out.turn = h.stopTurn(true) === 'complete' ? 'complete' : 'handed-over';
      else if (h.command === undefined && !h.handedOver) {
        h.handedOver = true;
        out.dropped++;
      }
    }
    return out;
  }

  /**
   * What /stop in chat `key` answers: the line, or nothing for one that did nothing (stopped no
   * answer, skipped no message) when the chat was told so within IDLE_STOP_QUIET_MS.
   */
  reply(key: string, o: StopOutcome): string | undefined {
    const idle = o.skipped === 0 && o.turn !== 'stopped' && o.turn !== 'stopped-empty';
    if (!idle) return this.text(o);
    const now = this.now();
    if ((this.quietUntil.get(key) ?? 0) > now) return undefined;
    // Chats whose quiet time is over are forgotten, so the map holds only the last minute's.
    if (this.quietUntil.size >= 1_000) for (const [k, until] of this.quietUntil) if (until <= now) this.quietUntil.delete(k);
    this.quietUntil.set(key, now + IDLE_STOP_QUIET_MS);
    return this.text(o);
  }

  /** The one line /stop answers. */
  text(o: StopOutcome): string {
    const n = o.skipped;
    const waiting = `${n} waiting message${n === 1 ? '' : 's'}`;
    const skipped = n === 0 ? '' : ` I also skipped ${waiting}; ${n === 1 ? 'it is' : 'they are'} kept in our conversation, unanswered.`;
    switch (o.turn) {
      case 'stopped':
        return `Stopped. What was written so far is kept, marked [stopped].${skipped} Your next message is answered as usual.`;
      case 'stopped-empty':
        return `Stopped before an answer was written; your message is kept.${skipped} Your next message is answered as usual.`;
      case 'complete':
        return `The answer was already complete, so there was nothing to stop.${skipped}`;
      case 'not-yours': {
        const who = this.adminsManage ? "they, the bot's owner or a group admin" : "they or the bot's owner";
        return `The answer being written is for someone else's message, so I did not stop it: only ${who} can.${skipped}`;
      }
      case 'none':
        if (n > 0) return `Skipped ${waiting}; ${n === 1 ? 'it is' : 'they are'} kept in our conversation, unanswered.`;
        return o.command ? `Nothing to stop: /${o.command} is running and ends by itself.` : 'Nothing to stop.';
    }
  }
}
