/** The RuntimeConfigStore contract (runtime.contract.ts) run against today's FileRuntimeConfigStore. */
import { mkdir, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FileRuntimeConfigStore } from '../../src/config/runtime.js';
import { tempDir } from '../helpers/workspace.js';
import { runtimeConfigContract } from './runtime.contract.js';

runtimeConfigContract('FileRuntimeConfigStore', async () => {
  const ws = await tempDir();
  // Re-checked at every read (no once-a-second pause), and each edit with its own mtime: two
  // writes within one timestamp tick would look like one to the mtime check.
  const open = () => new FileRuntimeConfigStore(ws.dir, undefined, 0);
  const store = open();
  let edits = 0;
  return {
    store,
    put: async (text) => {
      if (text === undefined) return rm(store.file, { force: true });
      await mkdir(path.dirname(store.file), { recursive: true });
      await writeFile(store.file, text);
      const at = new Date(Date.now() + ++edits * 10_000);
      await utimes(store.file, at, at);
    },
    another: async () => open(),
    cleanup: () => ws.cleanup(),
  };
});
