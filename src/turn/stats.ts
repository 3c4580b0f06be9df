/** What /status reports about recent turns, kept in memory per session. */
import { LRUCache } from 'lru-cache';
import type { SystemTiming } from './turn.js';

export interface TurnRecord {
  at: number;
  timings: SystemTiming[];
  systemPromptTokens: number;
  promptSections: Array<{ name: string; chars: number }>;
  memory: { tokens: number; budget: number; drops: Array<{ what: string; tokens: number; approximate?: boolean }> } | undefined;
  /** The model that wrote the answer (undefined: the turn gave none), and the one asked first when a fallback did. */
  answeredBy?: { model: string; fallbackFrom?: string | undefined } | undefined;
}

const MAX_CHATS = 10_000;

export class TurnStats {
  readonly startedAt = Date.now();
  /** The chats seen least recently are forgotten past a bound (their /status just shows less). */
  private readonly last = new LRUCache<string, TurnRecord>({ max: MAX_CHATS });

  record(sessionId: string, rec: TurnRecord): void {
    this.last.set(sessionId, rec);
  }

  lastTurn(sessionId: string): TurnRecord | undefined {
    return this.last.get(sessionId);
  }
}
