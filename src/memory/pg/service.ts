/**
 * PgMemoryService, the memory (service.ts) in PostgreSQL: each scope's files and versions are
 * rows keyed by the scope key (`channel:chatId`, or 'global' with MEMORY_SCOPE=global) in the
 * tables of migrations/pg/040_memory_files.sql — what the memory folder keeps in the embedded
 * mode (file-memory.ts), passing the same contract (test/memory/service.contract.ts). Any
 * number of processes may share them: every change is a transaction holding its rows. Nothing
 * is cached, so a change one process makes is what the next read of any process sees.
 *
 * Moving in and out (storage/portable.ts): the same items as the file twin (memory/portable.ts).
 */
import type { Database } from '../../storage/pg/database.js';
import type { Portable } from '../../storage/portable.js';
import { chatKey, parseChatKey } from '../../core/chat.js';
import type { MemoryService } from '../service.js';
import { MEMORY_ITEMS, type MemoryItem } from '../portable.js';
import { PgMemoryFiles } from './files.js';
import { MEMORY_TABLES, clearMemoryRows, memoryScopes, dumpMemoryRows, loadMemoryRows, memoryRowsEmpty } from './portable.js';

export class PgMemoryService implements MemoryService, Portable<MemoryItem> {
  readonly portableName = MEMORY_ITEMS;

  constructor(
    private readonly db: Database,
    readonly scope: 'chat' | 'global',
  ) {}

  scopeKey(channel: string, chatId: string): string {
    return this.scope === 'global' ? 'global' : chatKey({ channel, chatId });
  }

  forChat(channel: string, chatId: string): PgMemoryFiles {
    return new PgMemoryFiles(this.db, this.scopeKey(channel, chatId));
  }

  /** The chats with rows of their own (none with MEMORY_SCOPE=global). */
  async chats(): Promise<Array<{ channel: string; chatId: string }>> {
    if (this.scope === 'global') return [];
    return (await memoryScopes(this.db)).flatMap((scope) => {
      const chat = scope === 'global' ? undefined : parseChatKey(scope);
      return chat ? [chat] : [];
    });
  }

  /** Deletes the chat's rows, every table in one transaction. */
  async erase(channel: string, chatId: string): Promise<string[]> {
    if (this.scope === 'global') return [];
    const scope = this.scopeKey(channel, chatId);
    const counts = await this.db.tx(async (sql) => {
      const out: Array<[string, number]> = [];
      for (const t of MEMORY_TABLES) out.push([t, (await sql.query(`DELETE FROM ${t} WHERE scope = $1`, [scope])).rowCount]);
      return out;
    });
    const rows = counts.reduce((sum, [, n]) => sum + n, 0);
    if (rows === 0) return [];
    const tables = counts.filter(([, n]) => n > 0).map(([t]) => t);
    return [`memory of ${scope} in ${tables.join(', ')} (${rows} rows: MEMORY.md, versions, notes, history)`];
  }

  dump(): AsyncIterable<MemoryItem> {
    return dumpMemoryRows(this.db);
  }

  load(items: AsyncIterable<MemoryItem>): Promise<number> {
    return loadMemoryRows(this.db, items);
  }

  isEmpty(): Promise<boolean> {
    return memoryRowsEmpty(this.db);
  }

  clear(): Promise<void> {
    return clearMemoryRows(this.db);
  }
}
