/**
 * Builds the `# Memory` prompt section for ContextBuilding (20) from the chat's memory files,
 * inside its token budget (a line stating a corrected value marked with the current one), and
 * records its size and any drops on the turn for /status.
 */
import type { PromptSection, Turn } from '../../turn/turn.js';
import type { MemoryService } from '../../memory/service.js';
import { memoryBudgetTokens, type RuntimeConfigStore } from '../../config/runtime.js';
import { buildMemoryBlock, conversationNoteBodies, summarizedNoteKeys } from '../../memory/context.js';
import { localDate } from '../../memory/notes.js';
import { componentLogger } from '../../core/log.js';
import type { MemoryIndex } from '../../index/memory-index.js';
import { Superseded } from '../../index/search/superseded.js';

export interface MemorySectionDeps {
  memory: MemoryService;
  /** Where corrections are read: a line stating a corrected value is shown with the current one. */
  index?: MemoryIndex;
  runtime: RuntimeConfigStore;
  timezone: string;
}

/** How lines of this scope are marked, or undefined when no fact of it was ever corrected (or the index is off: nothing is known then). */
function markerOf(index: MemoryIndex | undefined, scope: string): ((line: string) => string) | undefined {
  const corrections = index?.enabled ? index.corrections(scope) : [];
  if (corrections.length === 0) return undefined;
  const old = new Superseded(corrections);
  return (line) => old.mark(line);
}

export function createMemorySection(deps: MemorySectionDeps): (turn: Turn) => Promise<PromptSection | null> {
  return async (turn) => {
    const rc = deps.runtime.get();
    if (!rc.memory.enabled) return null;
    const log = componentLogger(turn.log, 'Context');
    // A share of the chat's model's context, counted with its tokenizer (turn.model).
    const budgetTokens = memoryBudgetTokens(turn.model.limit, rc.memory);
    let block;
    try {
      block = await buildMemoryBlock(deps.memory.forChat(turn.inbound.channel, turn.inbound.chatId), {
        today: localDate(turn.inbound.receivedAt, deps.timezone),
        recentDays: rc.memory.recentDays,
        budgetTokens,
        count: (t) => turn.model.tokens.countText(t),
        inConversation: conversationNoteBodies(turn.session.messages),
        summarized: summarizedNoteKeys(turn.session.messages),
        mark: markerOf(deps.index, deps.memory.scopeKey(turn.inbound.channel, turn.inbound.chatId)),
      });
    } catch (err) {
      // Unreadable memory must not cost the user the answer: reply without the block.
      log.warn({ err }, 'memory files could not be read; answering without the # Memory block');
      return null;
    }
    turn.memory = { tokens: block.tokens, budget: block.budget, drops: block.drops };
    for (const d of block.drops) {
      log.info(
        { dropped: d.what, tokens: d.tokens, budget: budgetTokens },
        `memory over budget: dropped ${d.what} (${d.approximate ? 'about ' : ''}${d.tokens} tokens)`,
      );
    }
    log.debug(`Memory context: ${block.text.length} chars, ${block.tokens} tokens`);
    return block.text ? { name: 'memory', content: block.text } : null;
  };
}
