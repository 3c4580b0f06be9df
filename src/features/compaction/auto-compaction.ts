/**
 * AutoCompaction (18) — reads: the session and its token count against the context limit.
 * Writes: a compacted session (summary + kept tail, or truncation marker), history and
 * MEMORY.md through consolidation, and a notice for the reply. It runs first, before
 * ContextBuilding (20), so the prompt is built from the compacted session and the memory that
 * consolidation just updated.
 */
import { ORDER } from '../../turn/order.js';
import type { System } from '../../turn/system.js';
import type { RuntimeConfigStore } from '../../config/runtime.js';
import type { AutoCompactor } from '../../turn/auto-compact.js';
import { compactionNotice } from '../../memory/compaction.js';

export function createAutoCompactionSystem(deps: { compactor: AutoCompactor; runtime: RuntimeConfigStore }): System {
  function compactionEnabled(): boolean {
    return deps.runtime.get().compaction.enabled;
  }
  return {
    name: 'AutoCompaction',
    order: ORDER.AutoCompaction,
    onFailure: 'fail-turn',
    shouldRun: compactionEnabled,
    async run(turn) {
      const result = await deps.compactor.beforeTurn(
        turn.writes,
        turn.log,
        turn.images.reduce((sum, i) => sum + i.tokens, 0),
      );
      if (result) turn.notices.push(compactionNotice(result));
    },
  };
}
