/**
 * The MemoryIndex contract (memory-index.contract.ts) run against today's implementation,
 * SqliteMemoryIndex on a file (so a reopen is a restart). SQLite-specific promises (a damaged
 * or locked file, the scrub leaving no byte, the WAL) are tested in store/.
 */
import path from 'node:path';
import { silentLogger } from '../../src/core/log.js';
import { SqliteMemoryIndex } from '../../src/index/sqlite-memory-index.js';
import { SqliteIndexPortable } from '../../src/index/portable-index.js';
import { tempDir } from '../helpers/workspace.js';
import { memoryIndexContract, type MemoryIndexHandle } from './memory-index.contract.js';

memoryIndexContract('SqliteMemoryIndex', async () => {
  const ws = await tempDir();
  const file = path.join(ws.dir, 'memory.db');
  const portables: SqliteIndexPortable[] = [];
  const h: MemoryIndexHandle = {
    store: new SqliteMemoryIndex(file, silentLogger()),
    reopen: async () => {
      h.store.close();
      h.store = new SqliteMemoryIndex(file, silentLogger());
      return h.store;
    },
    portable: async () => {
      h.store.close();
      portables.push(new SqliteIndexPortable(file, silentLogger()));
      return portables.at(-1)!;
    },
    cleanup: async () => {
      for (const p of portables) p.close();
      h.store.close();
      await ws.cleanup();
    },
  };
  return h;
});
