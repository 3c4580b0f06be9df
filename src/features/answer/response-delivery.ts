/**
 * ResponseDelivery (40) — reads: `turn.response`, `turn.notices`. Writes: `turn.delivered`.
 * Sends the answer through the channel the message came from. It sits after ToolLoop (30) and
 * RememberRequest (35, which may add a notice) and before MemoryPersist (50) and Indexing (55): the user gets the reply before any
 * after-reply work starts, so that work can never delay or block it. The journal is told first
 * (`replying`): a process killed after the answer's save and before this point has its saved
 * answer sent at the next run of the message (dispatch/turn-run.ts), one killed after it not.
 */
import { crashPoint } from '../../core/crash-point.js';
import { ORDER } from '../../turn/order.js';
import { hasResponse, type System } from '../../turn/system.js';
import { deliver } from '../../turn/turn.js';

export function createResponseDeliverySystem(): System {
  return {
    name: 'ResponseDelivery',
    order: ORDER.ResponseDelivery,
    onFailure: 'fail-turn',
    shouldRun: hasResponse,
    async run(turn) {
      const text = turn.notices.length > 0 ? `${turn.response}\n\n${turn.notices.map((n) => `ℹ️ ${n}`).join('\n')}` : turn.response!;
      crashPoint('reply:saved');
      await turn.calls?.replying();
      await deliver(turn, text);
      crashPoint('reply:sent');
    },
  };
}
