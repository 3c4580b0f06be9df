/**
 * Which turns changed their chat's memory through a tool: the memory tools (memory-index.ts,
 * memory-files.ts) note each write that took effect — a fact saved or already known, corrected
 * or confirmed, MEMORY.md added to or rewritten — under the turn's id, and RememberRequest (35)
 * asks once the model has answered. A call that did nothing (the index off, a rewrite refused, a
 * tool that threw) is not noted: a "Noted!" after it saved nothing.
 */
import { LRUCache } from 'lru-cache';

export class TurnWrites {
  // Bounded like TurnBaselines (memory/guard.ts): a turn that ended before RememberRequest asked is forgotten in an hour.
  private readonly turns = new LRUCache<string, true>({ max: 500, ttl: 3_600_000 });

  /** A memory tool changed the memory in turn `turnId` (unset outside a turn: nothing to note). */
  wrote(turnId: string | undefined): void {
    if (turnId !== undefined) this.turns.set(turnId, true);
  }

  /** Whether a tool changed the memory in this turn; forgets the turn. */
  take(turnId: string): boolean {
    const wrote = this.turns.has(turnId);
    this.turns.delete(turnId);
    return wrote;
  }
}
