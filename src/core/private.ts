/**
 * Everything in the workspace is for the daemon's user only: the index holds every chat's
 * words, the log holds pairing codes. Files are created 0600 and folders 0700 whatever the
 * umask, and a file an older version (or another program, e.g. SQLite's 0644 default) left
 * more open is tightened when the daemon opens it.
 */
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** Creates `dir` (and missing parents) as 0700. Folders that already exist are left as they are. */
export function ensurePrivateDirSync(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Makes `file` a private regular file before a library opens it: created empty as 0600 when
 * missing (so a library that copies its mode, as SQLite does for -wal and -shm, copies 0600),
 * tightened to 0600 when it is a regular file with group or other bits. Anything that is not
 * a regular file (LOG_FILE=/dev/stderr, a FIFO) is left alone: its mode is not ours to change.
 */
export function preparePrivateFileSync(file: string, create = true): void {
  ensurePrivateDirSync(path.dirname(file));
  let st;
  try {
    st = lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !create) return;
    // 'a': never truncates a file created in between by someone else.
    closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
    st = lstatSync(file);
  }
  if (!st.isFile() || (st.mode & 0o777) === PRIVATE_FILE_MODE) return;
  try {
    chmodSync(file, PRIVATE_FILE_MODE);
  } catch (err) {
    // Another user's file we may write but not chmod: nothing more we can do about it.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
  }
}
