/** What /status reports about recent turns, kept in memory per session. */
import type { SystemTiming } from './turn.js';

export interface TurnRecord {
  at: number;
  timings: SystemTiming[];
  systemPromptTokens: number;
  promptSections: Array<{ name: string; chars: number }>;
  memory: { tokens: number; budget: number; drops: Array<{ what: string; tokens: number; approximate?: boolean }> } | undefined;
}

const MAX_CHATS = 10_000;

export class TurnStats {
  readonly startedAt = Date.now();
  private readonly last = new Map<string, TurnRecord>();

  record(sessionId: string, rec: TurnRecord): void {
    // Newest last; the oldest chats are forgotten past a bound (their /status just shows less).
    this.last.delete(sessionId);
    this.last.set(sessionId, rec);
    if (this.last.size > MAX_CHATS) this.last.delete(this.last.keys().next().value!);
  }

  lastTurn(sessionId: string): TurnRecord | undefined {
    return this.last.get(sessionId);
  }
}
