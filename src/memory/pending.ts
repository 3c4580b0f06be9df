/**
 * Memory writes held for the owner's approval: a call of a memory tool (memory_rewrite,
 * remember_fact, …) the model made after it had read text from outside the bot (an MCP server's
 * output) in that turn, and that the user's own message did not ask for. Such a call is not run:
 * it is kept here, word for word, until the owner approves it (then it runs as the tool would
 * have: features/memory-access/pending.ts), rejects it, or it expires after PENDING_TTL_MS with
 * nothing applied. `/forget` and purge take held writes out like any other memory.
 *
 * The store is a file of the workspace (pending-file.ts) or, with DATABASE_URL, a table
 * (pg/pending.ts); both keep the same records (`Portable`).
 */
import type { Portable } from '../storage/portable.js';

/** A held write lives this long at most: seven days, then it is dropped unapplied. */
export const PENDING_TTL_MS = 7 * 24 * 3_600_000;

/** One held call of a memory tool. */
export interface PendingWrite {
  /** `pw_` and 8 hex digits: what the owner names in `/memory approve`. */
  id: string;
  /** The memory scope it would change (MemoryService.scopeKey). */
  scope: string;
  /** The chat the call came from: the tool runs as from there when approved. */
  channel: string;
  chatId: string;
  group: boolean;
  /** The conversation it was made in (facts saved carry it). */
  conversationId: string;
  /** The tool and its JSON arguments, as the model sent them. */
  tool: string;
  args: string;
  /** The outside tools whose output the model had read (why it was held). */
  after: string[];
  /** ISO times. */
  heldAt: string;
  expiresAt: string;
}

export interface PendingWrites extends Portable<PendingWrite> {
  /** Keeps a held write; kept for good when it resolves. */
  hold(write: PendingWrite): Promise<void>;
  /** The scope's held writes not expired at `now`, oldest first (the expired ones are dropped). */
  list(scope: string, now?: Date): Promise<PendingWrite[]>;
  /** Takes one held write out (to apply or to drop it): undefined when there is none (or it expired). Only one caller gets it. */
  take(scope: string, id: string, now?: Date): Promise<PendingWrite | undefined>;
  /** How many of the scope's held writes have a text `test` matches (a /forget's preview). */
  matching(scope: string, test: (text: string) => boolean): Promise<number>;
  /** Deletes the scope's held writes that have a text `test` matches (/forget); how many. */
  forget(scope: string, test: (text: string) => boolean): Promise<number>;
  /** Every chat (`channel:chatId`) a held write came from (purge finds a group's topics). */
  chats(): Promise<string[]>;
  /** Deletes the held writes that came from the chat (purge); how many. */
  erase(channel: string, chatId: string): Promise<number>;
}

/** The texts of a held write a /forget looks in: every string of its arguments. */
export function pendingTexts(write: Pick<PendingWrite, 'args'>): string[] {
  const out: string[] = [write.args];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  try {
    walk(JSON.parse(write.args));
  } catch {
    /* not JSON: its text alone */
  }
  return out;
}

/** Whether a held write has run out at `now`. */
export const expired = (write: Pick<PendingWrite, 'expiresAt'>, now: Date): boolean => Date.parse(write.expiresAt) <= now.getTime();

/** Held writes in the one order both stores keep: by when they were held, then by id. */
export const byHeld = (a: PendingWrite, b: PendingWrite): number => a.heldAt.localeCompare(b.heldAt) || a.id.localeCompare(b.id);
