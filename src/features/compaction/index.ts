/**
 * Compaction: a conversation grown near the model's limit is summarised into memory before the
 * prompt is built (AutoCompaction 18: auto-compaction.ts), and `/compact N` does it on request
 * (compact.ts). When and how hard is turn/auto-compact.ts, counting turn/context-fit.ts: the
 * tool loop fits its requests with the same counts.
 */
import type { Feature } from '../../turn/feature.js';
import type { RuntimeConfigStore } from '../../config/runtime.js';
import type { AutoCompactor } from '../../turn/auto-compact.js';
import { createAutoCompactionSystem } from './auto-compaction.js';
import { createCompactCommand, type CompactDeps } from './compact.js';

export interface CompactionDeps extends CompactDeps {
  compactor: AutoCompactor;
  /** compaction.enabled (runtime-config.json) switches the automatic one. */
  runtime: RuntimeConfigStore;
}

export function compactionFeature(deps: CompactionDeps): Feature {
  return {
    name: 'compaction',
    systems: [createAutoCompactionSystem({ compactor: deps.compactor, runtime: deps.runtime })],
    commands: [createCompactCommand({ budget: deps.budget, compactor: deps.compactor })],
  };
}
