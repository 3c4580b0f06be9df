/**
 * Indexing (55) — reads: the user's message and `turn.response`. Writes: two `episode` rows in
 * memory.db (speaker, conversation id, chat scope, event time, source message id), their
 * entities, and queued embeddings. No LLM and no network on this path. It runs last, after the
 * reply (40) and the daily note (50): a slow or broken index can never delay or change the reply.
 */
import { ORDER } from '../turn/order.js';
import { hasResponse, type System } from '../turn/system.js';
import type { Turn } from '../turn/turn.js';
import type { IndexingService } from '../index/ingest.js';
import type { MemoryService } from '../memory/service.js';

export function createIndexingSystem(deps: { indexing: IndexingService; memory: MemoryService; botName: string }): System {
  function answeredAndIndexOn(turn: Turn): boolean {
    return hasResponse(turn) && turn.failure === undefined && deps.indexing.index.enabled;
  }
  return {
    name: 'Indexing',
    order: ORDER.Indexing,
    onFailure: 'skip',
    shouldRun: answeredAndIndexOn,
    async run(turn) {
      const scope = deps.memory.scopeKey(turn.inbound.channel, turn.inbound.chatId);
      const sessionId = turn.session.metadata.conversationId;
      deps.indexing.ingestMessage({
        content: turn.userMessage.content,
        role: 'user',
        speaker: turn.inbound.userName ?? turn.inbound.userId,
        sessionId,
        scope,
        eventTime: turn.inbound.receivedAt,
        sourceMessageId: turn.userMessage.sourceId ?? turn.userMessage.id,
      });
      deps.indexing.ingestMessage({
        content: turn.response ?? '',
        role: 'assistant',
        speaker: deps.botName,
        sessionId,
        scope,
        eventTime: new Date(),
        sourceMessageId: turn.session.messages.at(-1)?.id,
      });
    },
  };
}
