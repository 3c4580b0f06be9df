/**
 * The `# Relevant Memory` prompt section (ContextBuilding 20): the top hybrid-search results for
 * the incoming message among facts and episodes from *other* conversations of the same scope
 * that pass the relevance bar of index/relevant.ts (small talk injects nothing),
 * plus the latest weekly reflection — inside what is left of the memory budget after `# Memory`.
 */
import type { PromptSection, Turn } from '../pipeline/turn.js';
import type { MemoryIndex } from '../index/memory-index.js';
import type { MemoryService } from '../memory/service.js';
import type { RuntimeConfigStore } from '../config/runtime.js';
import type { TokenCounter } from '../llm/tokens.js';
import type { Embedder } from '../index/embeddings.js';
import { cutChars } from '../memory/notes.js';
import { collapseLineBreaks } from '../util/text.js';
import { relevantHits } from '../index/relevant.js';

export interface RelevantMemoryDeps {
  index: MemoryIndex;
  memory: MemoryService;
  runtime: RuntimeConfigStore;
  tokens: TokenCounter;
  contextLimit: () => number;
  embedder?: Embedder | undefined;
}

export function createRelevantMemorySection(deps: RelevantMemoryDeps): (turn: Turn) => Promise<PromptSection | null> {
  return async (turn) => {
    const rc = deps.runtime.get();
    if (!rc.memory.enabled || !deps.index.enabled) return null;
    const scope = deps.memory.scopeKey(turn.inbound.channel, turn.inbound.chatId);
    const budget = Math.floor((deps.contextLimit() * rc.memory.budgetPercent) / 100) - (turn.memory?.tokens ?? 0);
    if (budget <= 50) return null;
    const vector = await deps.embedder?.embedQuery(turn.userMessage.content);
    const results = relevantHits(deps.index, turn.userMessage.content, {
      scope,
      kinds: ['fact', 'episode'],
      excludeSessionId: turn.session.metadata.conversationId,
      vector,
    });
    const reflection = deps.index.latestReflection(scope);
    const lines: string[] = [];
    let used = deps.tokens.countText('# Relevant Memory\n');
    for (const r of results) {
      // One line each; newlines flattened so remembered text cannot add prompt headings.
      const line = `- ${r.date.slice(0, 10)} ${r.kind === 'fact' ? 'fact' : r.role === 'user' ? `${r.speaker ?? 'user'} said` : 'you said'}: ${collapseLineBreaks(cutChars(r.content, 400))}`;
      const cost = deps.tokens.countText(line) + 1;
      if (used + cost > budget) break;
      lines.push(line);
      used += cost;
    }
    if (reflection) {
      const line = `Weekly insight: ${collapseLineBreaks(cutChars(reflection.content, 800))}`;
      if (used + deps.tokens.countText(line) <= budget) lines.push(line);
    }
    if (lines.length === 0) return null;
    return { name: 'relevant-memory', content: `# Relevant Memory\n${lines.join('\n')}` };
  };
}
