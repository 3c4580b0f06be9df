/**
 * The scrub of /forget (erase.ts: full-text optimized, VACUUM, WAL truncated) in a worker thread
 * with its own connection. Why: it rewrites the whole of memory.db — 1.6 s for 100k memories on
 * this machine, growing with the file — and better-sqlite3 is synchronous, so on the event loop
 * every chat waited for one chat's /forget. Here the daemon keeps answering meanwhile; the
 * index holds its own writes until the scrub ends (MemoryIndex.scrubFreedSpace) so they do not
 * wait on the lock the VACUUM takes. Reads go on: in WAL mode a reader sees the last commit.
 *
 * Like checkpointer.ts, the worker is plain CommonJS run with `eval`, requiring better-sqlite3 by
 * the path this module resolves, so it loads the same under tsx and plain node.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { AppError } from '../../core/errors.js';

/** How long the worker's connection waits for a lock (a write of the main connection in flight, the checkpointer). */
const LOCK_WAIT_MS = 30_000;

const WORKER_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
let db;
try {
  const Database = require(workerData.sqlite);
  db = new Database(workerData.file, { timeout: workerData.lockWaitMs, fileMustExist: true });
  for (const t of workerData.ftsTables) db.exec('INSERT INTO ' + t + '(' + t + ") VALUES ('optimize')");
  db.pragma('secure_delete = ON');
  db.exec('VACUUM');
  // SQLite never calls the busy handler for the checkpoint lock: try again while another
  // checkpoint (the checkpointer worker's) is in the way.
  const deadline = Date.now() + workerData.lockWaitMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  let truncated = false;
  while (!truncated && Date.now() < deadline) {
    const [row] = db.pragma('wal_checkpoint(TRUNCATE)');
    truncated = !row || row.busy === 0;
    if (!truncated) Atomics.wait(pause, 0, 0, 20);
  }
  db.close();
  db = undefined;
  parentPort.postMessage(truncated ? { ok: true } : { ok: false, error: 'the WAL could not be truncated: a checkpoint kept it busy' });
} catch (err) {
  try { if (db) db.close(); } catch {}
  parentPort.postMessage({ ok: false, error: String((err && err.message) || err) });
}
`;

/** Runs the scrub of `file` in a worker; resolves when memory.db and its WAL hold no freed byte. */
export function scrubInWorker(file: string, ftsTables: readonly string[]): Promise<void> {
  const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_CODE, { eval: true, execArgv: [], workerData: { file, sqlite, ftsTables, lockWaitMs: LOCK_WAIT_MS } });
    let settled = false;
    const settle = (err?: Error): void => {
      if (settled) return;
      settled = true;
      void worker.terminate();
      if (err) reject(err);
      else resolve();
    };
    const failed = (reason: string) => new AppError('index.scrub_failed', { reason });
    worker.on('message', (msg: { ok: boolean; error?: string }) => settle(msg.ok ? undefined : failed(msg.error ?? 'unknown')));
    worker.on('error', (err) => settle(failed(err.message)));
    worker.on('exit', (code) => settle(failed(`the worker stopped (exit ${code})`)));
  });
}
