import type { Turn } from './turn.js';
import type { SystemName } from './order.js';

/**
 * One step of the pipeline. `onFailure` is the explicit choice the runner acts on:
 * - `fail-turn`: the system is on the reply path; a throw ends the turn with an apology.
 * - `skip`: after-reply work; a throw is logged as a warning and later systems still run.
 */
export interface System {
  name: SystemName;
  order: number;
  onFailure: 'fail-turn' | 'skip';
  /** A named predicate; when it returns false the runner logs its name as the skip reason. */
  shouldRun?: (turn: Turn) => boolean;
  run(turn: Turn): Promise<void>;
}

/** Predicate: the turn has a final answer to deliver or record. */
export function hasResponse(turn: Turn): boolean {
  return turn.response !== undefined;
}
