/**
 * ToolLoop (30) — reads: `turn.systemPrompt` and the session's messages. Writes: assistant and
 * tool messages to the session (saved as they happen) and `turn.response`. Sits after
 * ContextBuilding (20), whose prompt it sends, and before ResponseDelivery (40).
 */
import { ORDER } from '../../turn/order.js';
import type { System } from '../../turn/system.js';
import { runToolLoop, type ToolLoopDeps } from './loop.js';

export function createToolLoopSystem(deps: ToolLoopDeps): System {
  return {
    name: 'ToolLoop',
    order: ORDER.ToolLoop,
    onFailure: 'fail-turn',
    run: (turn) => runToolLoop(deps, turn),
  };
}
