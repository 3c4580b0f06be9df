/**
 * The `# Relevant Memory` prompt section (ContextBuilding 20): the top hybrid-search results for
 * the incoming message among facts and episodes from *other* conversations of the same scope
 * (and, after a compaction, from the part of this one its summary replaced) that pass the
 * relevance bar of index/search/relevant.ts (small talk injects nothing; a hit stating a value
 * a correction replaced comes below the current value, with it: index/search/superseded.ts),
 * plus the latest weekly reflection — inside what is left of the memory budget after `# Memory`.
 */
import type { PromptSection, Turn } from '../../turn/turn.js';
import type { MemoryIndex } from '../../index/memory-index.js';
import type { MemoryService } from '../../memory/service.js';
import { memoryBudgetTokens, type RuntimeConfigStore } from '../../config/runtime.js';
import type { Embedder } from '../../index/upkeep/embeddings.js';
import { ASSISTANT_NOTE_CHARS, USER_NOTE_CHARS, cutChars, oneLine } from '../../memory/notes.js';
import type { SearchResult } from '../../index/search/result.js';
import { collapseLineBreaks } from '../../core/text.js';
import { RELEVANT_LIMIT, relevantHits } from '../../index/search/relevant.js';
import { correctionNote } from '../../index/search/superseded.js';

export interface RelevantMemoryDeps {
  index: MemoryIndex;
  memory: MemoryService;
  runtime: RuntimeConfigStore;
  embedder?: Embedder | undefined;
}

/**
 * True when the hit is already in the system prompt: a message another conversation of today or
 * the recent days holds as a `# Memory` note line (seed 001 cuts: user 200, assistant 300
 * characters, one line), or a fact MEMORY.md states word for word. Sending it again under
 * `# Relevant Memory` costs tokens and tells the model nothing new.
 */
export function alreadyInPrompt(r: SearchResult, systemPrompt: string): boolean {
  if (r.kind === 'episode') {
    if (r.role === 'user') return systemPrompt.includes(`] User: ${oneLine(cutChars(r.content, USER_NOTE_CHARS))} | Assistant: `);
    if (r.role === 'assistant') {
      // A note line stating a corrected value has the correction's note after the answer.
      const answer = ` | Assistant: ${oneLine(cutChars(r.content, ASSISTANT_NOTE_CHARS))}`;
      return `${systemPrompt}\n`.includes(`${answer}\n`) || systemPrompt.includes(`${answer} (later corrected, `);
    }
    return false;
  }
  // A short fact ("yes") could match inside unrelated text: only whole sentences count.
  const text = r.content.trim();
  return text.length >= 20 && !text.includes('\n') && systemPrompt.includes(text);
}

export function createRelevantMemorySection(deps: RelevantMemoryDeps): (turn: Turn) => Promise<PromptSection | null> {
  return async (turn) => {
    const rc = deps.runtime.get();
    if (!rc.memory.enabled || !deps.index.enabled) return null;
    const scope = deps.memory.scopeKey(turn.inbound.channel, turn.inbound.chatId);
    const budget = memoryBudgetTokens(turn.model.limit, rc.memory) - (turn.memory?.tokens ?? 0);
    if (budget <= 50) return null;
    const vector = await deps.embedder?.embedQuery(turn.userMessage.content);
    const conversationId = turn.session.metadata.conversationId;
    const results = [...relevantHits(deps.index, turn.userMessage.content, { scope, kinds: ['fact', 'episode'], excludeSessionId: conversationId, vector })];
    // After a summary, the exchanges it replaced are in the prompt only as the summary (their
    // note lines stay out, memory/context.ts): the ones this message is about may come back
    // here word for word. Messages still in the conversation never do.
    if (results.length < RELEVANT_LIMIT && turn.session.messages.some((m) => m.covers && m.covers.length > 0)) {
      const inSession = new Set(turn.session.messages.flatMap((m) => (m.sourceId ? [m.id, m.sourceId] : [m.id])));
      const replaced = relevantHits(deps.index, turn.userMessage.content, { scope, kinds: ['episode'], vector }).filter(
        (r) => r.sessionId === conversationId && !r.sourceMessageIds.some((id) => inSession.has(id)),
      );
      results.push(...replaced.slice(0, RELEVANT_LIMIT - results.length));
    }
    const reflection = deps.index.latestReflection(scope);
    const lines: string[] = [];
    let used = turn.model.tokens.countText('# Relevant Memory\n');
    for (const r of results) {
      if (alreadyInPrompt(r, turn.systemPrompt)) continue;
      // One line each; newlines flattened so remembered text cannot add prompt headings.
      // A hit stating a value a correction replaced says so, with the value that holds now.
      const later = r.correctedBy ? ` ${correctionNote(r.correctedBy.content, r.correctedBy.date)}` : '';
      const line = `- ${r.date.slice(0, 10)} ${r.kind === 'fact' ? 'fact' : r.role === 'user' ? `${r.speaker ?? 'user'} said` : 'you said'}: ${collapseLineBreaks(cutChars(r.content, 400))}${later}`;
      const cost = turn.model.tokens.countText(line) + 1;
      if (used + cost > budget) break;
      lines.push(line);
      turn.sources.push({ kind: r.kind === 'fact' ? 'fact' : 'message', ref: r.id, text: r.content });
      used += cost;
    }
    if (reflection) {
      const line = `Weekly insight: ${collapseLineBreaks(cutChars(reflection.content, 800))}`;
      if (used + turn.model.tokens.countText(line) <= budget) lines.push(line);
    }
    if (lines.length === 0) return null;
    return { name: 'relevant-memory', content: `# Relevant Memory\n${lines.join('\n')}` };
  };
}
