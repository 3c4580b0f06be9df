/**
 * ContextBuilding (20) — reads: SYSTEM.md (instructions). Writes: `turn.promptSections` and
 * `turn.systemPrompt` (stable: instructions, # Memory), `turn.turnSections` and
 * `turn.turnPrompt` (this message only: # Relevant Memory). Sits after AutoCompaction (18) so it
 * sees the compacted session, and before ToolLoop (30), which sends what it builds: the system
 * prompt first, the per-message part after the history, so the prompt cache of the provider
 * keeps matching everything up to the newest exchange.
 */
import { ORDER } from '../../turn/order.js';
import type { System } from '../../turn/system.js';
import type { PromptSection } from '../../turn/turn.js';
import type { InstructionsSource } from './instructions.js';
import { componentLogger } from '../../core/log.js';

export interface ContextBuildingDeps {
  instructions: InstructionsSource;
  /** Further sections of the system prompt (memory) after the instructions, in order. */
  sections?: Array<(turn: Parameters<System['run']>[0]) => Promise<PromptSection | null>>;
  /** Sections that depend on this message (relevant memory): sent after the history. */
  turnSections?: Array<(turn: Parameters<System['run']>[0]) => Promise<PromptSection | null>>;
}

export function joinSections(sections: PromptSection[]): string {
  return sections
    .map((s) => s.content.trim())
    .filter(Boolean)
    .join('\n\n');
}

export function createContextBuildingSystem(deps: ContextBuildingDeps): System {
  return {
    name: 'ContextBuilding',
    order: ORDER.ContextBuilding,
    onFailure: 'fail-turn',
    async run(turn) {
      const sections: PromptSection[] = [{ name: 'instructions', content: await deps.instructions.load() }];
      for (const build of deps.sections ?? []) {
        const s = await build(turn);
        if (s?.content.trim()) sections.push(s);
      }
      turn.promptSections = sections;
      turn.systemPrompt = joinSections(sections);
      const perTurn: PromptSection[] = [];
      for (const build of deps.turnSections ?? []) {
        const s = await build(turn);
        if (s?.content.trim()) perTurn.push(s);
      }
      turn.turnSections = perTurn;
      turn.turnPrompt = joinSections(perTurn);
      componentLogger(turn.log, 'Context').debug(
        `system prompt: ${turn.systemPrompt.length} chars in ${sections.length} sections; this message: ${turn.turnPrompt.length} chars`,
      );
    },
  };
}
