/**
 * Indexing (55) — reads: the user's message and the answer as the session keeps them. Writes:
 * two `episode` rows in memory.db (speaker, conversation id, chat scope, event time, source
 * message id), their entities, and queued embeddings (derived.ts: the same rows the start
 * after a crash writes again from the session log when they are missing). No LLM and no network
 * on this path. It runs last, after the reply (40) and the daily note (50): a slow or broken
 * index can never delay or change the reply.
 */
import { ORDER } from '../../turn/order.js';
import { hasResponse, type System } from '../../turn/system.js';
import type { Turn } from '../../turn/turn.js';
import type { IndexingService } from '../../index/ingest.js';
import { exchangeOf, type DerivedWrites } from './derived.js';

export function createIndexingSystem(deps: { derived: DerivedWrites; indexing: IndexingService }): System {
  function answeredAndIndexOn(turn: Turn): boolean {
    return hasResponse(turn) && turn.answer !== undefined && turn.failure === undefined && deps.indexing.index.enabled;
  }
  return {
    name: 'Indexing',
    order: ORDER.Indexing,
    onFailure: 'skip',
    shouldRun: answeredAndIndexOn,
    async run(turn) {
      deps.derived.index(exchangeOf(turn));
    },
  };
}
