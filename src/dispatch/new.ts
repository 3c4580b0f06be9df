import type { Command } from '../turn/command.js';
import type { ConsolidationService } from '../memory/consolidation.js';
import type { MemoryService } from '../memory/service.js';
import type { MemoryIndex } from '../index/memory-index.js';

export interface NewDeps {
  consolidation: Pick<ConsolidationService, 'consolidate'>;
  memory: MemoryService;
  index: Pick<MemoryIndex, 'markConsolidated'>;
  /** CONSOLIDATION_TIMEOUT_MS, for the words of a failure. */
  consolidationTimeoutMs: number;
}

export function createNewCommand(deps: NewDeps): Command {
  const { consolidation, memory, index } = deps;
  return {
    name: 'new',
    description: 'Start a new conversation (what was said is saved to memory first)',
    // It ends the conversation for everyone in the group.
    access: 'managers',
    async run({ session, writes, inbound }) {
      // Consolidate first (awaited; the consolidation has its own timeout and falls back to a
      // raw history entry with every message whole), so nothing said in this conversation is lost with it.
      const said = session.messages.filter((m) => m.role !== 'system');
      let failed: string | undefined;
      if (said.length > 0) {
        const outcome = await consolidation.consolidate(said, memory.forChat(inbound.channel, inbound.chatId), {
          scope: memory.scopeKey(inbound.channel, inbound.chatId),
          sessionId: session.metadata.conversationId,
          chat: session.id,
          keepAll: true,
        });
        if (outcome.kind === 'raw-fallback') failed = why(outcome.reason, deps.consolidationTimeoutMs);
      }
      // The whole conversation is now in memory: the nightly job need not consolidate it again.
      if (said.length > 0) index.markConsolidated(session.metadata.conversationId, memory.scopeKey(inbound.channel, inbound.chatId));
      await writes.clear();
      if (failed === undefined) return 'Session cleared.';
      return [
        `Session cleared, but saving it to memory failed: ${failed}.`,
        'Nothing was lost: the whole conversation is in the history log (HISTORY.md, a [raw-fallback] entry), where I can still look it up.',
      ].join('\n');
    },
  };
}

/** The consolidation's failure (a stable code, or a sentence) as the user reads it. */
function why(reason: string | undefined, timeoutMs: number): string {
  switch (reason) {
    case 'llm.timeout':
      return `the model did not answer within ${Math.round(timeoutMs / 1000)} s`;
    case 'llm.unreachable':
      return 'the model could not be reached';
    case 'llm.rejected':
    case 'llm.rate_limited':
      return 'the model answered with an error';
    case 'llm.budget_exhausted':
      return "this chat's daily token budget is used up";
    default:
      return 'the model gave no usable answer';
  }
}
