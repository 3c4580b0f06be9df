/**
 * The chat's memory as the user and the model reach it: `/memory` shows MEMORY.md, the saved
 * facts (memory-facts.ts) and the notes, `/memory history` and `/memory undo` its versions
 * (memory-history.ts); the model reads and changes the memory files (memory-files.ts) and
 * searches and keeps facts in memory.db (memory-index.ts). RememberRequest (35) keeps what the
 * user asked to remember when the model's tools did not (remember-request.ts). A write the model
 * makes after reading outside text waits for the owner (pending.ts: `/memory pending`).
 */
import type { Feature } from '../../turn/feature.js';
import type { MemoryService } from '../../memory/service.js';
import type { MemoryIndex } from '../../index/memory-index.js';
import type { Embedder } from '../../index/upkeep/embeddings.js';
import { createMemoryCommand } from './memory.js';
import { createMemoryFileTools } from './memory-files.js';
import { createMemoryIndexTools } from './memory-index.js';
import { createRememberRequestSystem } from './remember-request.js';
import { TurnWrites } from './turn-writes.js';
import { MEMORY_WRITE_TOOLS } from './remember-request.js';
import type { PendingApprovals } from './pending.js';
import type { RuntimeConfigStore } from '../../config/runtime.js';

export interface MemoryAccessDeps {
  memory: MemoryService;
  index: MemoryIndex;
  /** memory.enabled: switched off, a "remember this" is not kept by RememberRequest (and the reply says so). */
  runtime: RuntimeConfigStore;
  /** EMBEDDINGS_MODEL's embedder: facts saved by the model get their vector (unset: none). */
  embedder?: Embedder | undefined;
  /** Memory writes held for the owner (pending.ts): the write tools go through it. */
  pending: PendingApprovals;
}

export function memoryAccessFeature(deps: MemoryAccessDeps): Feature {
  const { memory, index, embedder, pending } = deps;
  const writes = new TurnWrites();
  const tools = [...createMemoryFileTools(memory, writes), ...createMemoryIndexTools(index, memory, embedder, writes)];
  return {
    name: 'memory-access',
    systems: [createRememberRequestSystem({ memory, index, embedder, runtime: deps.runtime, writes })],
    commands: [createMemoryCommand({ memory, index, pending })],
    tools: tools.map((t) => (MEMORY_WRITE_TOOLS.has(t.name) ? pending.holding(t, (turnId) => writes.held(turnId)) : t)),
  };
}
