/**
 * The pipeline runner: systems in ascending order, each timed, with the one wrap point for
 * their failures. Order mistakes (two systems on one number, a number not in the table) are
 * refused when the pipeline is built, not discovered at run time.
 */
import { AppError, errorMessage, isAppError } from '../errors.js';
import type { Logger } from '../log.js';
import { ORDER } from './order.js';
import type { System } from './system.js';
import type { Turn } from './turn.js';

export function apologyText(errorId: string, err: unknown): string {
  const hint = isAppError(err) && err.code.startsWith('llm.')
    ? err.code === 'llm.context_length_exceeded'
      ? 'The conversation is too long for the model. Send /compact or /new, then try again.'
      : 'The language model is not answering right now. Please try again in a minute.'
    : 'Please try again; if it keeps happening, tell the bot owner.';
  return `Sorry, something went wrong while answering (error id ${errorId}). ${hint}`;
}

/** "1 second", "90 seconds", "2 minutes". */
function spoken(ms: number): string {
  const s = Math.round(ms / 1000);
  const [n, unit] = s >= 120 && s % 60 === 0 ? [s / 60, 'minute'] : [s, 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** The one reply to a turn stopped at TURN_TIMEOUT_MS. */
export function deadlineText(errorId: string, timeoutMs: number): string {
  return `Sorry, I could not answer within ${spoken(timeoutMs)}, so I stopped (error id ${errorId}). Your message is saved; please send it again in a moment, perhaps shorter.`;
}

export class Pipeline {
  readonly systems: readonly System[];

  constructor(systems: System[], private readonly log: Logger) {
    const byOrder = new Map<number, string>();
    for (const s of systems) {
      if (ORDER[s.name] !== s.order) {
        throw new AppError('pipeline.duplicate_order', `system ${s.name} has order ${s.order}, but the order table says ${ORDER[s.name]}`);
      }
      const other = byOrder.get(s.order);
      if (other) {
        throw new AppError('pipeline.duplicate_order', `systems ${other} and ${s.name} both have order ${s.order}; give each system its own number in src/pipeline/order.ts`);
      }
      byOrder.set(s.order, s.name);
    }
    this.systems = [...systems].sort((a, b) => a.order - b.order);
  }

  async run(turn: Turn): Promise<void> {
    for (const sys of this.systems) {
      if (turn.ended) {
        turn.log.debug({ system: sys.name }, `[Pipeline] ${sys.name} not run: turn ended by ${turn.ended.by} (${turn.ended.reason})`);
        continue;
      }
      const t0 = performance.now();
      try {
        // The predicate runs inside the wrap point too: a throwing predicate is that system's failure.
        if (sys.shouldRun && !sys.shouldRun(turn)) {
          turn.log.debug({ system: sys.name }, `[Pipeline] ${sys.name} skipped: ${sys.shouldRun.name || 'shouldRun'} is false`);
          turn.timings.push({ system: sys.name, order: sys.order, ms: 0, outcome: 'skipped' });
          continue;
        }
        await sys.run(turn);
        turn.timings.push({ system: sys.name, order: sys.order, ms: performance.now() - t0, outcome: 'ok' });
      } catch (err) {
        turn.timings.push({ system: sys.name, order: sys.order, ms: performance.now() - t0, outcome: 'failed' });
        await this.handleFailure(turn, sys, err);
      }
    }
  }

  private async handleFailure(turn: Turn, sys: System, err: unknown): Promise<void> {
    if (turn.signal.aborted) {
      // Stopped at the turn's deadline, which already logged it and told the user.
      turn.log.debug({ system: sys.name }, `[Pipeline] ${sys.name} stopped by the turn deadline`);
      turn.ended ??= { by: sys.name, reason: 'turn deadline' };
      return;
    }
    const code = isAppError(err) ? err.code : 'pipeline.system_failed';
    if (sys.onFailure === 'skip') {
      turn.log.warn({ system: sys.name, order: sys.order, code, err }, `[Pipeline] ${sys.name} failed after the reply; continuing: ${errorMessage(err)}`);
      return;
    }
    const errorId = turn.id;
    turn.failure = { system: sys.name, errorId, code };
    turn.log.error({ system: sys.name, order: sys.order, code, errorId, err }, `[Pipeline] ${sys.name} failed; the user gets an apology`);
    turn.ended = { by: sys.name, reason: `failed: ${code}` };
    if (!turn.delivered) {
      try {
        await turn.reply(apologyText(errorId, err));
        turn.delivered = true;
      } catch (sendErr) {
        turn.log.error({ err: sendErr, errorId }, '[Pipeline] could not deliver the apology either');
      }
    }
  }
}
