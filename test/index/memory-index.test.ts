/**
 * The MemoryIndex contract (memory-index.contract.ts) run against today's implementation,
 * SqliteMemoryIndex on a file (so a reopen is a restart). SQLite-specific promises (a damaged
 * or locked file, the scrub leaving no byte, the WAL) are tested in store/.
 */
import path from 'node:path';
import { silentLogger } from '../../src/core/log.js';
import { SqliteMemoryIndex } from '../../src/index/sqlite-memory-index.js';
import { tempDir } from '../helpers/workspace.js';
import { memoryIndexContract, type MemoryIndexHandle } from './memory-index.contract.js';

memoryIndexContract('SqliteMemoryIndex', async () => {
  const ws = await tempDir();
  const file = path.join(ws.dir, 'memory.db');
  const h: MemoryIndexHandle = {
    store: new SqliteMemoryIndex(file, silentLogger()),
    reopen: async () => {
      h.store.close();
      h.store = new SqliteMemoryIndex(file, silentLogger());
      return h.store;
    },
    cleanup: async () => {
      h.store.close();
      await ws.cleanup();
    },
  };
  return h;
});
