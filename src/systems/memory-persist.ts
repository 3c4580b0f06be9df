/**
 * MemoryPersist (50) — reads: the user's message and `turn.response`. Writes: one line
 * `[HH:mm] User: … | Assistant: …` appended to today's note of the chat's memory scope.
 * After ResponseDelivery (40): the user already has the reply, so a failed write (disk full,
 * read-only) is only a warning. After ContextBuilding (20): this turn's prompt was built from
 * the notes as they were before this exchange.
 */
import { ORDER } from '../turn/order.js';
import { hasResponse, type System } from '../turn/system.js';
import type { Turn } from '../turn/turn.js';
import type { MemoryService } from '../memory/service.js';
import type { RuntimeConfigStore } from '../config/runtime.js';
import { formatNoteLine, localDate } from '../memory/notes.js';
import { componentLogger } from '../core/log.js';

export interface MemoryPersistDeps {
  memory: MemoryService;
  runtime: RuntimeConfigStore;
  timezone: string;
}

export function createMemoryPersistSystem(deps: MemoryPersistDeps): System {
  function answeredWithMemoryOn(turn: Turn): boolean {
    return hasResponse(turn) && turn.failure === undefined && deps.runtime.get().memory.enabled;
  }
  return {
    name: 'MemoryPersist',
    order: ORDER.MemoryPersist,
    onFailure: 'skip',
    shouldRun: answeredWithMemoryOn,
    async run(turn) {
      const at = turn.inbound.receivedAt;
      const line = formatNoteLine(at, deps.timezone, turn.userMessage.content, turn.response ?? '');
      await deps.memory.forChat(turn.inbound.channel, turn.inbound.chatId).appendNote(localDate(at, deps.timezone), line);
      componentLogger(turn.log, 'MemoryPersist').debug(`Appended memory entry (${line.length} chars)`);
    },
  };
}
