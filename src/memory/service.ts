/**
 * Which memory files a chat uses. MEMORY_SCOPE=chat (default): `memory/{channel}:{chatId}/`,
 * so one chat's notes and MEMORY.md can never reach another chat. MEMORY_SCOPE=global: the
 * seed's single `memory/` folder, for a bot with one owner.
 */
import path from 'node:path';
import { sessionFileKey } from '../storage/paths.js';
import { MemoryFiles } from './files.js';
import { LRUCache } from 'lru-cache';

export class MemoryService {
  /** The chats' MemoryFiles, made again when dropped (they hold no state a turn relies on across messages). */
  private readonly cache = new LRUCache<string, MemoryFiles>({ max: 1_000 });

  constructor(
    readonly root: string,
    readonly scope: 'chat' | 'global',
  ) {}

  /** The scope key stored with index rows and used for isolation checks. */
  scopeKey(channel: string, chatId: string): string {
    return this.scope === 'global' ? 'global' : `${channel}:${chatId}`;
  }

  forChat(channel: string, chatId: string): MemoryFiles {
    const dir = this.scope === 'global' ? this.root : path.join(this.root, sessionFileKey(channel, chatId));
    let files = this.cache.get(dir);
    if (!files) {
      files = new MemoryFiles(dir, this.root);
      this.cache.set(dir, files);
    }
    return files;
  }
}
