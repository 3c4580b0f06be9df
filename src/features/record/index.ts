/**
 * What an answered exchange leaves besides the session: its line in today's note (MemoryPersist
 * 50: memory-persist.ts) and its two rows in memory.db (Indexing 55: indexing.ts), after the
 * reply. Both derive from the session log (derived.ts), and the start after a crash writes again
 * from it what is missing.
 */
import type { Feature } from '../../turn/feature.js';
import type { IndexingService } from '../../index/ingest.js';
import { createMemoryPersistSystem, type MemoryPersistDeps } from './memory-persist.js';
import { createIndexingSystem } from './indexing.js';

export interface RecordDeps extends MemoryPersistDeps {
  indexing: IndexingService;
}

export function recordFeature(deps: RecordDeps): Feature {
  return {
    name: 'record',
    systems: [
      createMemoryPersistSystem({ derived: deps.derived, runtime: deps.runtime }),
      createIndexingSystem({ derived: deps.derived, indexing: deps.indexing }),
    ],
  };
}
