/**
 * Opening memory files only when they are regular files. A FIFO named like a daily note would
 * block the thread-pool thread that opens it (past any tool timeout, and SIGTERM with it); a
 * device or socket is no note either. The open never waits (O_NONBLOCK: a FIFO with no writer
 * opens at once) and the file is checked on the open handle (fstat) before a byte is read or
 * written, so nothing can be swapped in between.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../core/errors.js';

const { O_RDONLY, O_WRONLY, O_RDWR, O_APPEND, O_CREAT, O_NONBLOCK } = constants;

export type RegularOpenMode = 'read' | 'append' | 'append+read';

const FLAGS: Record<RegularOpenMode, number> = {
  read: O_RDONLY | O_NONBLOCK,
  append: O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK,
  'append+read': O_RDWR | O_APPEND | O_CREAT | O_NONBLOCK,
};

export function notAFile(file: string, kind = 'a FIFO, device or socket'): AppError {
  return new AppError('storage.not_a_file', { file: path.basename(file), kind });
}

/** Opens `file` and returns the handle only if it is a regular file; otherwise closes it and throws `storage.not_a_file`. */
export async function openRegular(file: string, mode: RegularOpenMode, createMode = 0o600): Promise<FileHandle> {
  let fh: FileHandle;
  try {
    fh = await open(file, FLAGS[mode], createMode);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // O_NONBLOCK write-open of a FIFO nobody reads; EISDIR for a folder opened to write.
    if (code === 'ENXIO') throw notAFile(file);
    if (code === 'EISDIR') throw notAFile(file, 'a folder');
    throw err;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw notAFile(file, st.isDirectory() ? 'a folder' : undefined);
    return fh;
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw err;
  }
}

/** The text of a regular file; ENOENT is thrown as is (callers decide what "missing" means). */
export async function readRegular(file: string): Promise<string> {
  const fh = await openRegular(file, 'read');
  try {
    return await fh.readFile('utf8');
  } finally {
    await fh.close();
  }
}

/** How long the memory page (and a store listing its chats for it) waits for one file: a slow disk answers the request without it, never holds it. */
export const READ_DEADLINE_MS = 5_000;

/** `read`, or `storage.read_timeout` after READ_DEADLINE_MS (the read itself runs on; its result is dropped). */
export async function withinDeadline<T>(what: string, read: Promise<T>, ms = READ_DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AppError('storage.read_timeout', { file: what, ms })), ms);
  });
  read.catch(() => undefined);
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
  }
}
