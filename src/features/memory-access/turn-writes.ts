/**
 * Which turns changed their chat's memory through a tool: the memory tools (memory-index.ts,
 * memory-files.ts) note each write that took effect — a fact saved or already known, corrected
 * or confirmed, MEMORY.md added to or rewritten — under the turn's id, and RememberRequest (35)
 * asks once the model has answered. A call that did nothing (the index off, a rewrite refused, a
 * tool that threw) is not noted: a "Noted!" after it saved nothing. A write held for the owner's
 * approval (pending.ts) is noted as held: the reply says it waits.
 */
import { LRUCache } from 'lru-cache';

export class TurnWrites {
  // Bounded like TurnBaselines (memory/guard.ts): a turn that ended before RememberRequest asked is forgotten in an hour.
  private readonly turns = new LRUCache<string, { wrote: boolean; held: boolean }>({ max: 500, ttl: 3_600_000 });

  private note(turnId: string | undefined, what: 'wrote' | 'held'): void {
    if (turnId !== undefined) this.turns.set(turnId, { wrote: false, held: false, ...this.turns.get(turnId), [what]: true });
  }

  /** A memory tool changed the memory in turn `turnId` (unset outside a turn: nothing to note). */
  wrote(turnId: string | undefined): void {
    this.note(turnId, 'wrote');
  }

  /** A memory tool's call in turn `turnId` was held for the owner's approval. */
  held(turnId: string | undefined): void {
    this.note(turnId, 'held');
  }

  /** Whether a tool changed the memory in this turn, and whether one was held; forgets the turn. */
  take(turnId: string): { wrote: boolean; held: boolean } {
    const noted = this.turns.get(turnId) ?? { wrote: false, held: false };
    this.turns.delete(turnId);
    return noted;
  }
}
