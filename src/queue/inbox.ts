/**
 * The intake journal: every message a channel hands over is recorded here, durably, *before* it
 * waits in its chat's queue, and closed once its user message is in the session (or its command
 * ran). If the daemon is killed in between — while the message waits behind others of its chat,
 * or mid-turn — the next start finds it and handles it then. A message is therefore never lost
 * between "accepted" and "on disk", and replies are not repeated: a turn whose answer is already
 * in the session is not re-run.
 *
 * A message is handled under one entry: a copy of it a channel sends again (Telegram does when a
 * kill came before the update id was recorded) is recognised by its chat, message id and words,
 * at accept and at the next start, and is not handled again — so a message given up after
 * restarts stays given up, and one answered or still under way is not answered twice.
 *
 * Each tool call a turn makes is marked too, as it starts and as it ends: a call still open when
 * the process died is named in the entry's `interrupted`, and the recovered turn does not run
 * that tool again (features/answer/loop.ts) — an MCP answer that kills the daemon cannot kill it
 * again at every start. A call that ended is named in `completed`: a tool that changes something
 * is not called again by the recovered turn (a reminder is not set twice).
 *
 * The answer is marked the same way: just before it is saved (`ANSWER_MARK`), and again just
 * before it goes to the channel (`REPLY_MARK`, in its place). An entry whose run died with the
 * first mark last has an answer that never left, if the session holds one: it is sent at the
 * next run (without one, the turn runs again). With the second, the channel may have it, and
 * it is not sent again (never twice). A copy of a message (a channel sending it again) is an
 * entry without either: the answer is its first entry's to send.
 *
 * Callers see the `Inbox` interface; today's implementation is an append-only JSON-lines file
 * (file-inbox.ts). What any implementation must do: test/queue/inbox.contract.ts.
 */
import { createHash } from 'node:crypto';
import type { InboundMessage } from '../core/message.js';
import type { Redaction } from '../storage/redaction.js';

/**
 * Call names marking the answer (no tool can have them: tool names are letters, digits, `_` and
 * `-`): being saved in the session, then being handed to the channel. Never ended: each replaces the
 * one before, and the entry's close follows the send.
 */
export const ANSWER_MARK = '(answer)';
export const REPLY_MARK = '(reply)';

/** A tool call that was running when the process died: its tool and a hash of its arguments (never the arguments). */
export interface InterruptedCall {
  tool: string;
  args: string;
}

export interface InboxEntry {
  id: string;
  msg: InboundMessage;
  /** How many times its handling has started (in this and earlier runs) without finishing. */
  attempt: number;
  /** Tool calls of earlier runs that never ended (the process died while they ran), oldest first. */
  interrupted: InterruptedCall[];
  /**
   * Tool calls of earlier runs that ended (whatever their outcome), oldest first: a tool that
   * changes something (`Tool.once`) is not run again with the same arguments — the process died
   * after the call and before the turn was saved, and the rerun must not set a reminder twice.
   */
  completed: InterruptedCall[];
}

export interface Inbox {
  /**
   * Entries accepted by an earlier run and never closed, oldest first, one per message (same
   * channel, chat, message id and words: a copy a channel sent again is the same message), its
   * `attempt` counting the starts under all its entries. `duplicates`: ids of further open
   * entries for a message already listed, or already closed — a message handled (answered,
   * given up, refused) is not handled again through a copy; they only need closing.
   */
  unfinished(): Promise<{ entries: InboxEntry[]; duplicates: string[] }>;
  /** Closes entries of an earlier run without handling them (given up on, or duplicates). */
  close(ids: string[]): Promise<void>;
  /**
   * Records an accepted message; `durable` resolves once it would survive a power cut. The id is
   * known at once, so handling can start while the write is under way. A copy of a message the
   * journal holds, open or closed (one with a message id; the channel sent it again), is
   * recorded closed and names that entry in `copyOf`: it is not to be handled.
   */
  accept(msg: InboundMessage): { id: string; durable: Promise<void>; copyOf?: string };
  /**
   * Takes over an entry an earlier run left open, under its own id: nothing is written, so a
   * kill during recovery leaves the journal as it was. Its starts keep counting attempts.
   */
  adopt(id: string): { id: string; durable: Promise<void> };
  /** Handling begins (the message left its queue): counts towards giving up on a poison message. Only for an id this run accepted or adopted. */
  started(id: string): Promise<void>;
  /** A tool call of the entry's turn is about to run (`args`: as the model sent them; only their hash is kept). Must survive the process dying during the call. */
  callStarted(id: string, tool: string, args: string): Promise<void>;
  /** The call `callStarted` named has ended (whatever its outcome). */
  callEnded(id: string): Promise<void>;
  /**
   * Closes an entry; `others` (an album's further items, answered with it) close in the same
   * write, so a kill never leaves part of an answered album open to be answered again.
   */
  done(id: string, others?: string[]): Promise<void>;
  /**
   * Takes the words out of a chat's entries (its messages' text, names, anything of them kept),
   * in order with appends: /forget. True when any entry held them.
   */
  redact(channel: string, chatId: string, words: Redaction): Promise<boolean>;
  /** The chats with an entry kept, open or closed (in no order): where purge looks for a group's topics. */
  chats(): Promise<Array<{ channel: string; chatId: string }>>;
  /**
   * Deletes the chats' entries, open or closed, for good (purge, with the daemon stopped). One
   * line per thing deleted, for purge's report; none when nothing of theirs was kept.
   */
  erase(chats: Array<{ channel: string; chatId: string }>): Promise<string[]>;
  /** Lets go of what it holds open (shutdown); a later write opens it again. */
  shutdown(): Promise<void>;
}

/**
 * A short hash of a call's arguments, the same for the same JSON whatever its spacing or key
 * order: enough to tell "the same call" in the log, without keeping the words in the journal.
 */
export function argumentsHash(args: string): string {
  let canonical = args.trim();
  try {
    canonical = JSON.stringify(sorted(JSON.parse(canonical)));
  } catch {
    /* not JSON: hashed as it came */
  }
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/**
 * Messages remembered for recognising a copy, newest kept: a channel sends one again right
 * after a restart (Telegram: the updates of the batch under way at the kill), so the journal's
 * recent messages are enough, and memory stays bounded however long the daemon runs.
 */
const KNOWN_MESSAGES = 10_000;

/**
 * What makes two entries one message: its chat, the channel's message id and a hash of its words
 * (a copy a channel sends again has the same; the hash keeps the words out of memory). A message
 * without an id is told apart by when it was received: never a copy.
 */
export function messageKey(m: Pick<InboundMessage, 'channel' | 'chatId' | 'messageId' | 'text'> & { receivedAt: Date }): string {
  const words = createHash('sha256').update(m.text).digest('hex').slice(0, 16);
  return JSON.stringify([m.channel, m.chatId, m.messageId ?? m.receivedAt.getTime(), words]);
}

/** One entry of a journal as read at start, before entries of one message are merged. */
export interface JournalEntry extends InboxEntry {
  key: string;
  open: boolean;
  /** Recorded closed at accept as a copy of another entry's message. */
  copy: boolean;
  /** Starts an older version carried over when it journaled the message again (0 otherwise). */
  carried: number;
  /** Starts counted under this entry. */
  starts: number;
}

/**
 * The messages a journal holds, by `messageKey`: the id of each one's first entry. Every journal
 * (file, PostgreSQL) keeps one, filled from its entries at start and by its accepts, so that a
 * copy of a message is recognised at accept (`copyOf`) and at the next start alike.
 */
export class KnownMessages {
  private readonly first = new Map<string, string>();

  /** The entry holding this message, for a message with an id (one without is never a copy). */
  copyOf(msg: InboundMessage): string | undefined {
    return msg.messageId === undefined ? undefined : this.first.get(messageKey(msg));
  }

  /** Notes a message's first entry; the oldest is forgotten past KNOWN_MESSAGES. */
  remember(key: string, id: string): void {
    if (this.first.has(key)) return;
    this.first.set(key, id);
    if (this.first.size > KNOWN_MESSAGES) this.first.delete(this.first.keys().next().value!);
  }

  /** Forgets the messages of these entries (erased: a later message is not a copy of them). */
  forget(ids: ReadonlySet<string>): void {
    for (const [key, id] of this.first) if (ids.has(id)) this.first.delete(key);
  }

  /**
   * What `unfinished` returns from a journal's entries (oldest first): one entry per open message,
   * taking the further ones' starts and interrupted calls (their ids are `duplicates`). A message
   * closed under one of its entries is handled: an open copy of it is not handled again (given
   * up stays given up). A copy recorded closed at accept says nothing of its message; an entry an
   * older version re-journaled continues one it closed (it carries that one's starts), so it is
   * the message's own.
   */
  merge(all: Iterable<JournalEntry>): { entries: InboxEntry[]; duplicates: string[] } {
    const list = [...all];
    const closed = new Set<string>();
    for (const e of list) {
      this.remember(e.key, e.id);
      if (!e.open && !e.copy && e.carried === 0) closed.add(e.key);
    }
    const byMessage = new Map<string, JournalEntry>();
    const duplicates: string[] = [];
    for (const e of list) {
      if (!e.open) continue;
      const first = byMessage.get(e.key);
      if (closed.has(e.key) && e.carried === 0) duplicates.push(e.id);
      else if (!first) byMessage.set(e.key, e);
      else {
        // Each run's starts count once; what an older version carried over is counted already.
        first.starts += e.starts;
        first.carried = Math.max(first.carried, e.carried);
        first.interrupted.push(...e.interrupted);
        first.completed.push(...e.completed);
        duplicates.push(e.id);
      }
    }
    const entries = [...byMessage.values()].map(({ id, msg, interrupted, completed, carried, starts }) => ({
      id,
      msg,
      interrupted,
      completed,
      attempt: carried + starts,
    }));
    return { entries, duplicates };
  }
}
