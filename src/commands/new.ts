import type { Command } from './types.js';

export function createNewCommand(): Command {
  return {
    name: 'new',
    description: 'Start a new conversation (what was said is saved to memory first)',
    // It ends the conversation for everyone in the group.
    access: 'managers',
    async run({ session, writes, inbound, services }) {
      // Consolidate first (awaited; the consolidation has its own timeout and falls back to a
      // raw history entry), so nothing said in this conversation is lost with it.
      const said = session.messages.filter((m) => m.role !== 'system');
      if (said.length > 0) {
        await services.consolidation.consolidate(said, services.memory.forChat(inbound.channel, inbound.chatId), {
          scope: services.memory.scopeKey(inbound.channel, inbound.chatId),
          sessionId: session.metadata.conversationId,
          chat: session.id,
        });
      }
      // The whole conversation is now in memory: the nightly job need not consolidate it again.
      if (said.length > 0) services.index.markConsolidated(session.metadata.conversationId, services.memory.scopeKey(inbound.channel, inbound.chatId));
      await writes.clear();
      return 'Session cleared.';
    },
  };
}
