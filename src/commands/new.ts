import type { Command } from './types.js';

export function createNewCommand(): Command {
  return {
    name: 'new',
    description: 'Start a new conversation (what was said is saved to memory first)',
    // It ends the conversation for everyone in the group.
    access: 'managers',
    async run({ session, writes, inbound, services }) {
      // Consolidate first (awaited; the consolidation has its own timeout and falls back to a
      // raw history entry with every message whole), so nothing said in this conversation is lost with it.
      const said = session.messages.filter((m) => m.role !== 'system');
      let failed: string | undefined;
      if (said.length > 0) {
        const outcome = await services.consolidation.consolidate(said, services.memory.forChat(inbound.channel, inbound.chatId), {
          scope: services.memory.scopeKey(inbound.channel, inbound.chatId),
          sessionId: session.metadata.conversationId,
          chat: session.id,
          keepAll: true,
        });
        if (outcome.kind === 'raw-fallback') failed = why(outcome.reason, services.config.consolidationTimeoutMs);
      }
      // The whole conversation is now in memory: the nightly job need not consolidate it again.
      if (said.length > 0) services.index.markConsolidated(session.metadata.conversationId, services.memory.scopeKey(inbound.channel, inbound.chatId));
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
