/**
 * WhyRecord (45): after the reply, keeps what the answer was built from (sources.ts) with the ids
 * of the messages it went out as, for `/why`. After-reply work: a failure is logged and costs
 * only this record, never the reply.
 */
import { ORDER } from '../../turn/order.js';
import { hasResponse, type System } from '../../turn/system.js';
import { chatKey } from '../../core/chat.js';
import { itemsOf } from './sources.js';
import type { WhyStore } from './store.js';

export function createWhyRecordSystem(deps: { store: WhyStore }): System {
  return {
    name: 'WhyRecord',
    order: ORDER.WhyRecord,
    onFailure: 'skip',
    shouldRun: hasResponse,
    async run(turn) {
      await deps.store.add({
        chat: chatKey(turn.inbound),
        turn: turn.id,
        at: new Date().toISOString(),
        sent: [...(turn.reply.sent ?? [])],
        items: itemsOf(turn),
      });
    },
  };
}
