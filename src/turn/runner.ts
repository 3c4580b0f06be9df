/**
 * The pipeline runner: systems in ascending order, each timed, with the one wrap point for
 * their failures (recorded on the turn; the intake apologises). Order mistakes (two systems on one number, a number not in the table) are
 * refused when the pipeline is built, not discovered at run time.
 */
import { AppError, errorMessage, isAppError } from '../core/errors.js';
import { componentLogger, type Logger } from '../core/log.js';
import { ORDER } from './order.js';
import type { System } from './system.js';
import type { Turn } from './turn.js';

export class Pipeline {
  readonly systems: readonly System[];

  constructor(
    systems: System[],
    private readonly log: Logger,
  ) {
    const byOrder = new Map<number, string>();
    for (const s of systems) {
      if (ORDER[s.name] !== s.order) {
        throw new AppError('pipeline.duplicate_order', { problem: `system ${s.name} has order ${s.order}, but the order table says ${ORDER[s.name]}` });
      }
      const other = byOrder.get(s.order);
      if (other) {
        throw new AppError('pipeline.duplicate_order', { problem: `systems ${other} and ${s.name} both have order ${s.order}` });
      }
      byOrder.set(s.order, s.name);
    }
    this.systems = [...systems].sort((a, b) => a.order - b.order);
  }

  async run(turn: Turn): Promise<void> {
    const log = componentLogger(turn.log, 'Pipeline');
    for (const sys of this.systems) {
      if (turn.ended) {
        log.debug({ system: sys.name }, `${sys.name} not run: turn ended by ${turn.ended.by} (${turn.ended.reason})`);
        continue;
      }
      const t0 = performance.now();
      try {
        // The predicate runs inside the wrap point too: a throwing predicate is that system's failure.
        if (sys.shouldRun && !sys.shouldRun(turn)) {
          log.debug({ system: sys.name }, `${sys.name} skipped: ${sys.shouldRun.name || 'shouldRun'} is false`);
          turn.timings.push({ system: sys.name, order: sys.order, ms: 0, outcome: 'skipped' });
          continue;
        }
        await sys.run(turn);
        turn.timings.push({ system: sys.name, order: sys.order, ms: performance.now() - t0, outcome: 'ok' });
      } catch (err) {
        turn.timings.push({ system: sys.name, order: sys.order, ms: performance.now() - t0, outcome: 'failed' });
        await this.handleFailure(turn, sys, err, log);
      }
    }
  }

  private async handleFailure(turn: Turn, sys: System, err: unknown, log: Logger): Promise<void> {
    if (turn.signal.aborted) {
      // Stopped at the turn's deadline or by /stop, which already logged it and told the user.
      log.debug({ system: sys.name }, `${sys.name} stopped (${turn.ended?.reason ?? 'turn deadline'})`);
      turn.ended ??= { by: sys.name, reason: 'turn deadline' };
      return;
    }
    const code = isAppError(err) ? err.code : 'pipeline.system_failed';
    if (sys.onFailure === 'skip') {
      log.warn({ system: sys.name, order: sys.order, code, err }, `${sys.name} failed after the reply; continuing: ${errorMessage(err)}`);
      return;
    }
    const errorId = turn.id;
    // The intake (dispatch/intake.ts) tells the user, with this id, once the turn has ended.
    turn.failure = { system: sys.name, errorId, code };
    log.error({ system: sys.name, order: sys.order, code, errorId, err }, `${sys.name} failed; the user gets an apology`);
    turn.ended = { by: sys.name, reason: `failed: ${code}` };
  }
}
