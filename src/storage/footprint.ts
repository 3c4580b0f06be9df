/**
 * How much a store keeps of one chat on disk and when it last changed: the memory page's chat
 * list shows it. A file store measures its files with `footprintOf`; another store says it its way.
 */
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

export interface Footprint {
  bytes: number;
  /** Milliseconds since the epoch of the newest change; 0 when there is nothing. */
  mtime: number;
}

export const NO_FOOTPRINT: Footprint = { bytes: 0, mtime: 0 };

/** Size and newest mtime of a file or a folder (one level of sub-folders, e.g. versions/); links are not followed. */
export async function footprintOf(p: string, depth = 1): Promise<Footprint> {
  const st = await lstat(p).catch(() => null);
  if (!st) return NO_FOOTPRINT;
  if (st.isFile()) return { bytes: st.size, mtime: st.mtimeMs };
  if (!st.isDirectory() || depth < 0) return NO_FOOTPRINT;
  let bytes = 0;
  let mtime = 0;
  for (const name of await readdir(p).catch(() => [] as string[])) {
    const f = await footprintOf(path.join(p, name), depth - 1);
    bytes += f.bytes;
    mtime = Math.max(mtime, f.mtime);
  }
  return { bytes, mtime };
}
