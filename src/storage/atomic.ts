/**
 * Durable file writes. Every file the daemon rewrites goes through `writeFileAtomic`
 * (temp file in the same directory → fsync → rename → fsync of the directory), so a crash at
 * any instant leaves either the old file or the new one, never a torn one. `withFileLock`
 * holds a proper-lockfile lock so a second process (a CLI run, a second daemon) cannot
 * interleave a read-modify-write with ours.
 */
import { open, rename, unlink, readdir, stat, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import lockfile from 'proper-lockfile';
import { LRUCache } from 'lru-cache';
import { AppError, isAppError } from '../core/errors.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../core/private.js';
import { openRegular } from './regular.js';

const TMP_SUFFIX = '.tmp';

export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}${TMP_SUFFIX}`);
  try {
    const fh = await open(tmp, 'w', PRIVATE_FILE_MODE);
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw new AppError('storage.write_failed', { action: 'write', target: path.basename(file), reason: (err as Error).message }, { cause: err });
  }
  await syncDir(dir);
}

/** Appends in progress per file, so two appends to one file in this process never interleave. */
const appending = new Map<string, Promise<void>>();
/** Files this process has appended to: they end with a newline (our last write did). Forgetting one only costs one more check of its last byte. */
const appended = new LRUCache<string, true>({ max: 10_000 });

/**
 * Appends `line` + newline to `file` as one write, fsynced (the directory too when the file is
 * new) unless `durable` is false: then it is written (a kill cannot lose it, a power cut can)
 * and the caller makes it durable later (`syncFile`) or can rebuild it. For files only this
 * daemon writes (daily notes): appends are serialized in-process — no lock files, four system
 * calls. A file whose last line lost its newline (a power cut, a hand edit) gets one first;
 * that is checked once per file per run.
 */
export function appendLine(file: string, line: string, durable = true): Promise<void> {
  const prev = appending.get(file) ?? Promise.resolve();
  const next = prev.catch(() => undefined).then(() => appendNow(file, line, durable));
  appending.set(file, next);
  void next
    .finally(() => {
      if (appending.get(file) === next) appending.delete(file);
    })
    .catch(() => undefined);
  return next;
}

async function appendNow(file: string, line: string, durable: boolean): Promise<void> {
  let created = false;
  try {
    const known = appended.has(file);
    // Only a regular file: a FIFO or device named like a note is refused without blocking.
    const fh = await openRegular(file, known ? 'append' : 'append+read', PRIVATE_FILE_MODE);
    try {
      let lead = '';
      if (!known) {
        const { size } = await fh.stat();
        created = size === 0;
        if (size > 0) {
          const last = Buffer.alloc(1);
          await fh.read(last, 0, 1, size - 1);
          if (last[0] !== 0x0a) lead = '\n';
        }
      }
      await fh.write(`${lead}${line}\n`);
      if (durable) await fh.sync();
      appended.set(file, true);
    } finally {
      await fh.close();
    }
  } catch (err) {
    if (isAppError(err, 'storage.not_a_file')) throw err;
    throw new AppError('storage.write_failed', { action: 'append to', target: path.basename(file), reason: (err as Error).message }, { cause: err });
  }
  if (created && durable) await syncDir(path.dirname(file));
}

/**
 * Makes what was written to `file` durable (its data and its directory entry): for files
 * appended to with `durable: false`. Waits for appends in progress first. A file that is gone
 * is nothing to sync.
 */
export async function syncFile(file: string): Promise<void> {
  await appending.get(file)?.catch(() => undefined);
  try {
    const fh = await openRegular(file, 'read');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new AppError('storage.write_failed', { action: 'sync', target: path.basename(file), reason: (err as Error).message }, { cause: err });
  }
  await syncDir(path.dirname(file));
}

async function syncDir(dir: string): Promise<void> {
  // The rename is only durable once the directory entry is on disk; some filesystems refuse
  // fsync on a directory handle, which is harmless to ignore.
  try {
    const dh = await open(dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  } catch {
    /* not supported here */
  }
}

export interface LockOptions {
  /** How long to keep retrying a held lock before giving up (ms). */
  waitMs?: number;
  /** A lock not refreshed for this long is considered left by a dead process (ms, >= 2000). */
  staleMs?: number;
}

/** Runs `fn` while holding the inter-process lock for `file` (the file need not exist). */
export async function withFileLock<T>(file: string, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
  const waitMs = opts.waitMs ?? 10_000;
  const release = await lockfile.lock(file, {
    realpath: false,
    stale: opts.staleMs ?? 5_000,
    retries: { retries: Math.max(1, Math.ceil(waitMs / 50)), minTimeout: 10, maxTimeout: 50, factor: 1.2 },
    onCompromised: () => {
      // A compromised lock (our refresh failed) must not crash the daemon; the atomic
      // rename still guarantees the file itself is whole.
    },
  });
  try {
    return await fn();
  } finally {
    await release().catch(() => undefined);
  }
}

/** Removes temp files a killed process left behind (older than `minAgeMs`). */
export async function removeStaleTempFiles(dir: string, minAgeMs = 60_000): Promise<number> {
  let removed = 0;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  const now = Date.now();
  for (const name of names) {
    if (!name.startsWith('.') || !name.endsWith(TMP_SUFFIX)) continue;
    const p = path.join(dir, name);
    try {
      const st = await stat(p);
      if (now - st.mtimeMs >= minAgeMs) {
        await unlink(p);
        removed++;
      }
    } catch {
      /* raced with another cleaner */
    }
  }
  return removed;
}

/** Creates `dir` and missing parents, 0700 (see private.ts). */
export async function ensureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}
