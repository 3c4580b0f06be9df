/**
 * The WAL checkpointer: a worker thread with its own connection to memory.db that copies the
 * WAL back into the database file (`PRAGMA wal_checkpoint(PASSIVE)`) once it holds
 * CHECKPOINT_PAGES pages. Why: SQLite's automatic checkpoint runs inside the commit that
 * crosses its threshold and syncs the file there, so about one message in 45 waited ~20 ms
 * for it on the event loop (docs/BENCHMARKS.md, "SQLite index"). A timer on the main thread
 * would only move that stall; a worker takes it off the event loop and off the commit path.
 * The main connection keeps a much larger automatic checkpoint (SAFETY_NET_PAGES) so the WAL
 * stays bounded if the worker fails or stops; its errors are logged and change nothing else.
 *
 * The worker is plain CommonJS run with `eval`, so it loads the same way under tsx (tests,
 * dev) and plain node, and it requires better-sqlite3 by the path this module resolves.
 * It waits on a shared Int32Array instead of a timer so that `stop()` can be synchronous:
 * MemoryIndex.close() is, and the main connection must close last (SQLite then checkpoints
 * and removes the WAL, as before).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../core/log.js';

/** WAL pages that make the worker checkpoint (SQLite's own default threshold). */
export const CHECKPOINT_PAGES = 1_000;
/** The main connection's automatic checkpoint while the worker runs: only a safety net. */
export const SAFETY_NET_PAGES = 10_000;
/** How often the worker looks at the WAL. Reading 100 bytes of the -shm file is cheap. */
const CHECK_MS = 1_000;
/** Longest close() waits for the worker to finish a checkpoint and close its connection. */
const STOP_WAIT_MS = 5_000;

// Slots of the shared Int32Array.
const STATE = 0; // 0 not started, 1 open, 2 stopped before it opened, 3 closed
const STOP = 1; // 1: the main thread asks the worker to close
const CHECKPOINTS = 2; // checkpoints the worker has run (for tests and `status`)

// pendingFrames(): frames in the WAL not yet copied to the database (mxFrame - nBackfill),
// read from the wal-index header in \`-shm\` (sqlite.org/walformat.html) without a lock.
const WORKER_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const shared = new Int32Array(workerData.shared);
const report = (what, err) => parentPort.postMessage({ what, error: String((err && err.message) || err) });
function pendingFrames() {
  let fd;
  try {
    fd = fs.openSync(workerData.file + '-shm', 'r');
    const buf = Buffer.alloc(100);
    if (fs.readSync(fd, buf, 0, 100, 0) < 100) return 0;
    const le = require('node:os').endianness() === 'LE';
    const mxFrame = le ? buf.readUInt32LE(16) : buf.readUInt32BE(16);
    const nBackfill = le ? buf.readUInt32LE(96) : buf.readUInt32BE(96);
    return mxFrame - nBackfill;
  } catch {
    return 0;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
if (Atomics.compareExchange(shared, ${STATE}, 0, 1) === 0) {
  let db;
  try {
    const Database = require(workerData.sqlite);
    db = new Database(workerData.file, { timeout: 0, fileMustExist: true });
    while (Atomics.wait(shared, ${STOP}, 0, ${CHECK_MS}) === 'timed-out') {
      if (pendingFrames() < workerData.pages) continue;
      try {
        db.pragma('wal_checkpoint(PASSIVE)');
        Atomics.add(shared, ${CHECKPOINTS}, 1);
      } catch (err) {
        if (!/BUSY|LOCKED/.test(String(err && err.code))) throw err;
      }
    }
  } catch (err) {
    report('checkpointer', err);
  } finally {
    try { if (db) db.close(); } catch (err) { report('closing', err); }
    Atomics.store(shared, ${STATE}, 3);
    Atomics.notify(shared, ${STATE});
  }
}
`;

export class WalCheckpointer {
  private readonly shared = new Int32Array(new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT));
  private worker: Worker | null;

  /** `onFailure` runs once if the worker stops on an error (the caller restores SQLite's own checkpoint). */
  constructor(file: string, log: Logger, onFailure: () => void, pages = CHECKPOINT_PAGES) {
    const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
    // No execArgv: the worker runs plain CommonJS and needs neither tsx nor the parent's flags.
    this.worker = new Worker(WORKER_CODE, { eval: true, execArgv: [], workerData: { file, sqlite, pages, shared: this.shared.buffer } });
    // Never the reason the process stays alive; close() ends it.
    this.worker.unref();
    let failed = false;
    const fail = (reason: string): void => {
      log.warn({ reason }, 'memory.db checkpoint worker stopped; SQLite checkpoints by itself from now on.');
      if (failed || !this.worker) return;
      failed = true;
      onFailure();
    };
    this.worker.on('message', (msg: { what: string; error: string }) => fail(`${msg.what}: ${msg.error}`));
    this.worker.on('error', (err) => fail(err.message));
  }

  /** Checkpoints the worker has run so far. */
  get checkpoints(): number {
    return Atomics.load(this.shared, CHECKPOINTS);
  }

  /** Asks the worker to close its connection and waits for it (a checkpoint in progress ends first). */
  stop(): void {
    if (!this.worker) return;
    Atomics.store(this.shared, STOP, 1);
    Atomics.notify(this.shared, STOP);
    // Not started yet: it will see state 2 and never open the file.
    if (Atomics.compareExchange(this.shared, STATE, 0, 2) === 1) {
      const deadline = Date.now() + STOP_WAIT_MS;
      while (Atomics.load(this.shared, STATE) !== 3 && Date.now() < deadline) {
        Atomics.wait(this.shared, STATE, 1, deadline - Date.now());
      }
    }
    void this.worker.terminate();
    this.worker = null;
  }
}
