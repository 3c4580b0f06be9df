/**
 * The prompt: SYSTEM.md's instructions (instructions.ts) and the chat's memory within its budget
 * (`# Memory`: memory-section.ts), then what this message recalls from other conversations
 * (`# Relevant Memory`: relevant-memory.ts), built once per turn (ContextBuilding 20:
 * context-building.ts).
 */
import type { Feature } from '../../turn/feature.js';
import { createContextBuildingSystem } from './context-building.js';
import type { InstructionsSource } from './instructions.js';
import { createMemorySection, type MemorySectionDeps } from './memory-section.js';
import { createRelevantMemorySection, type RelevantMemoryDeps } from './relevant-memory.js';

export interface PromptDeps extends Omit<MemorySectionDeps, 'index'>, RelevantMemoryDeps {
  instructions: InstructionsSource;
}

export function promptFeature(deps: PromptDeps): Feature {
  const { instructions, memory, runtime, timezone, index, embedder } = deps;
  return {
    name: 'prompt',
    systems: [
      createContextBuildingSystem({
        instructions,
        sections: [createMemorySection({ memory, runtime, timezone, index })],
        turnSections: [createRelevantMemorySection({ index, memory, runtime, embedder })],
      }),
    ],
  };
}
