/**
 * Builds the `# Memory` prompt section for ContextBuilding (20) from the chat's memory files,
 * inside its token budget, and records its size and any drops on the turn for /status.
 */
import type { PromptSection, Turn } from '../turn/turn.js';
import type { MemoryService } from '../memory/service.js';
import { memoryBudgetTokens, type RuntimeConfigStore } from '../config/runtime.js';
import { buildMemoryBlock, conversationNoteBodies, summarizedNoteKeys } from '../memory/context.js';
import { localDate } from '../memory/notes.js';

export interface MemorySectionDeps {
  memory: MemoryService;
  runtime: RuntimeConfigStore;
  timezone: string;
}

export function createMemorySection(deps: MemorySectionDeps): (turn: Turn) => Promise<PromptSection | null> {
  return async (turn) => {
    const rc = deps.runtime.get();
    if (!rc.memory.enabled) return null;
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
      turn.log.warn({ err }, '[Context] memory files could not be read; answering without the # Memory block');
      return null;
    }
    turn.memory = { tokens: block.tokens, budget: block.budget, drops: block.drops };
    for (const d of block.drops) {
      turn.log.info({ dropped: d.what, tokens: d.tokens, budget: budgetTokens }, `[Context] memory over budget: dropped ${d.what} (${d.approximate ? 'about ' : ''}${d.tokens} tokens)`);
    }
    turn.log.debug(`[Context] Memory context: ${block.text.length} chars, ${block.tokens} tokens`);
    return block.text ? { name: 'memory', content: block.text } : null;
  };
}
