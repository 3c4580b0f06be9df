/** What /status reports about recent turns, kept in memory per session. */
import type { SystemTiming } from './pipeline/turn.js';

export interface TurnRecord {
  at: number;
  timings: SystemTiming[];
  systemPrompt: string;
  systemPromptTokens: number;
  promptSections: Array<{ name: string; chars: number }>;
  memory: { tokens: number; budget: number; drops: Array<{ what: string; tokens: number }> } | undefined;
}

export class TurnStats {
  readonly startedAt = Date.now();
  private readonly last = new Map<string, TurnRecord>();

  record(sessionId: string, rec: TurnRecord): void {
    this.last.set(sessionId, rec);
  }

  lastTurn(sessionId: string): TurnRecord | undefined {
    return this.last.get(sessionId);
  }
}
