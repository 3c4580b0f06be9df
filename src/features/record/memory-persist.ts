/**
 * MemoryPersist (50) — reads: the user's message and the answer as the session keeps them
 * (`turn.userMessage`, `turn.answer`). Writes: one line `[HH:mm] User: … | Assistant: …` in
 * today's note of the chat's memory scope (derived.ts, memory/daily-notes.ts: the one
 * writer), not fsynced — the session log already holds the exchange, and the start after a
 * crash writes a missing line again from it. After ResponseDelivery (40): the user already has
 * the reply, so a failed write (disk full, read-only) is only a warning. After ContextBuilding
 * (20): this turn's prompt was built from the notes as they were before this exchange.
 */
import { ORDER } from '../../turn/order.js';
import { hasResponse, type System } from '../../turn/system.js';
import type { Turn } from '../../turn/turn.js';
import type { RuntimeConfigStore } from '../../config/runtime.js';
import { componentLogger } from '../../core/log.js';
import { exchangeOf, type DerivedWrites } from './derived.js';

export interface MemoryPersistDeps {
  derived: DerivedWrites;
  runtime: RuntimeConfigStore;
}

export function createMemoryPersistSystem(deps: MemoryPersistDeps): System {
  function answeredWithMemoryOn(turn: Turn): boolean {
    return hasResponse(turn) && turn.answer !== undefined && turn.failure === undefined && deps.runtime.get().memory.enabled;
  }
  return {
    name: 'MemoryPersist',
    order: ORDER.MemoryPersist,
    onFailure: 'skip',
    shouldRun: answeredWithMemoryOn,
    async run(turn) {
      await deps.derived.note(exchangeOf(turn));
      componentLogger(turn.log, 'MemoryPersist').debug('Appended memory entry');
    },
  };
}
