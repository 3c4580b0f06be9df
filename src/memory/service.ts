/**
 * Which memory a chat uses. MEMORY_SCOPE=chat (default): each chat its own, so one chat's notes
 * and MEMORY.md can never reach another chat. MEMORY_SCOPE=global: one memory, the seed's single
 * `memory/` folder, for a bot with one owner.
 *
 * Callers see the `MemoryService` interface; its implementations are the memory folder
 * (file-memory.ts, FileMemoryService) and PostgreSQL (pg/service.ts, PgMemoryService). What any
 * implementation must do: test/memory/service.contract.ts.
 */
import type { MemoryFiles } from './files.js';

export interface MemoryService {
  readonly scope: 'chat' | 'global';
  /** The scope key stored with index rows and used for isolation checks: `channel:chatId`, or 'global'. */
  scopeKey(channel: string, chatId: string): string;
  /** The chat's memory (with MEMORY_SCOPE=global, the one shared by every chat). */
  forChat(channel: string, chatId: string): MemoryFiles;
  /** The chats with a memory of their own kept (none with MEMORY_SCOPE=global), in no order. */
  chats(): Promise<Array<{ channel: string; chatId: string }>>;
  /**
   * Deletes the chat's own memory for good (MEMORY.md, versions, notes, history; purge, with the
   * daemon stopped); nothing with MEMORY_SCOPE=global. One line per thing deleted, for purge's report.
   */
  erase(channel: string, chatId: string): Promise<string[]>;
}
