/**
 * The chat's memory as the user and the model reach it: `/memory` shows MEMORY.md, the saved
 * facts (memory-facts.ts) and the notes, `/memory history` and `/memory undo` its versions
 * (memory-history.ts); the model reads and changes the memory files (memory-files.ts) and
 * searches and keeps facts in memory.db (memory-index.ts).
 */
import type { Feature } from '../../turn/feature.js';
import type { MemoryService } from '../../memory/service.js';
import type { MemoryIndex } from '../../index/memory-index.js';
import type { Embedder } from '../../index/upkeep/embeddings.js';
import { createMemoryCommand } from './memory.js';
import { createMemoryFileTools } from './memory-files.js';
import { createMemoryIndexTools } from './memory-index.js';

export interface MemoryAccessDeps {
  memory: MemoryService;
  index: MemoryIndex;
  /** EMBEDDINGS_MODEL's embedder: facts saved by the model get their vector (unset: none). */
  embedder?: Embedder | undefined;
}

export function memoryAccessFeature(deps: MemoryAccessDeps): Feature {
  const { memory, index, embedder } = deps;
  return {
    name: 'memory-access',
    commands: [createMemoryCommand({ memory, index })],
    tools: [...createMemoryFileTools(memory), ...createMemoryIndexTools(index, memory, embedder)],
  };
}
