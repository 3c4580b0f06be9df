/**
 * When AutoCompaction (18) compacts, and how hard: over 80 % of the limit → compact keeping
 * `keepLastMessages`; over 90 % → keep half as many. The request is weighed with `# Memory` and
 * `# Relevant Memory` at their whole budget (ContextFit.reservedSystemTokens), so the history
 * grows only into what the prompt leaves it. Also `/compact N`. Counting and compacting are the
 * ContextFit service's (context-fit.ts), which ToolLoop (30) uses on its own.
 */
import { componentLogger, type Logger } from '../core/log.js';
import type { Session } from '../sessions/model.js';
import type { SessionWriter } from '../sessions/writer.js';
import type { RuntimeConfigStore } from '../config/runtime.js';
import type { CompactResult } from '../memory/compaction.js';
import type { ContextFit } from './context-fit.js';

export const THRESHOLD = 0.8;
export const HARD_THRESHOLD = 0.9;

export interface AutoCompactorDeps {
  fit: ContextFit;
  runtime: RuntimeConfigStore;
}

export class AutoCompactor {
  constructor(private readonly deps: AutoCompactorDeps) {}

  /** Usage of the context: as last built (/status) and with the memory budget whole (system 18). */
  usage(session: Session): { tokens: number; reserved: number; limit: number; ratio: number } {
    return this.deps.fit.usage(session);
  }

  /**
   * System 18: compact when the coming request would be over 80 % (90 %: harder). `imageTokens`:
   * this turn's image (Images 15), which goes with the request and cannot be compacted.
   */
  async beforeTurn(writes: SessionWriter, log: Logger, imageTokens = 0): Promise<CompactResult | null> {
    const session = writes.session;
    const rc = this.deps.runtime.get().compaction;
    const usage = this.usage(session);
    const { limit } = usage;
    const tokens = usage.reserved + imageTokens;
    const ratio = tokens / limit;
    if (ratio <= THRESHOLD) return null;
    const hard = ratio > HARD_THRESHOLD;
    const keepLast = hard ? Math.max(2, Math.floor(rc.keepLastMessages / 2)) : rc.keepLastMessages;
    componentLogger(log, 'AutoCompact').info(
      { tokens, limit, threshold: Math.floor(limit * THRESHOLD), messages: session.messages.length },
      `Context too large: ~${tokens} tokens (threshold ${Math.floor(limit * THRESHOLD)}), ${session.messages.length} messages. Compacting...`,
    );
    // A truncation aims under 60 % on the same count, so the next turns do not truncate again.
    const systemTokens = this.deps.fit.reservedSystemTokens(session);
    const result = await this.deps.fit.compact(writes, keepLast, hard ? 'hard' : 'auto', { bounded: true, imageTokens, systemTokens });
    return result.kind === 'none' ? null : result;
  }

  /** `/compact N` and the like: compact now keeping the last `keepLast` messages. */
  async compactNow(writes: SessionWriter, keepLast: number): Promise<CompactResult> {
    return this.deps.fit.compact(writes, keepLast, 'manual', { bounded: false });
  }
}
