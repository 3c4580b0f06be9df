/**
 * Builds the `# Memory` prompt section for ContextBuilding (20) from the chat's memory files,
 * inside its token budget, and records its size and any drops on the turn for /status.
 */
import type { PromptSection, Turn } from '../../turn/turn.js';
import type { MemoryService } from '../../memory/service.js';
import { memoryBudgetTokens, type RuntimeConfigStore } from '../../config/runtime.js';
import { buildMemoryBlock, conversationNoteBodies, summarizedNoteKeys } from '../../memory/context.js';
import { localDate } from '../../memory/notes.js';
import { componentLogger } from '../../core/log.js';

export interface MemorySectionDeps {
  memory: MemoryService;
  runtime: RuntimeConfigStore;
  timezone: string;
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
