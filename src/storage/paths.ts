/**
 * Turning ids from users and the model into file names and paths that cannot leave their
 * directory. Chat ids are encoded (not just filtered) so two different ids never share a file.
 */
import path from 'node:path';
import { createHash } from 'node:crypto';
import { readlink, realpath } from 'node:fs/promises';
import { AppError } from '../core/errors.js';
import type { Chat } from '../core/chat.js';

const MAX_COMPONENT = 120;

/**
 * Encodes any string as one safe path component: `[A-Za-z0-9_-]` kept, every other UTF-8 byte
 * written as `%XX`. No `/`, no `.`, no NUL can survive, so `../../etc/x` stays a plain name.
 * Over-long results are cut and suffixed with a hash to stay unique and under NAME_MAX.
 */
export function safeComponent(id: string): string {
  let out = '';
  for (const byte of Buffer.from(id, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9_-]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  // '~' is always escaped above, so this name cannot be the encoding of any other id.
  if (out.length === 0) out = '~empty';
  if (out.length > MAX_COMPONENT) {
    const hash = createHash('sha256').update(id).digest('hex').slice(0, 16);
    out = `${out.slice(0, MAX_COMPONENT - 17)}~${hash}`;
  }
  return out;
}

/** The file-system key for a chat: `{channel}:{chatId}` with both parts made safe. */
export function sessionFileKey(channel: string, chatId: string): string {
  return `${safeComponent(channel)}:${safeComponent(chatId)}`;
}

/**
 * The chat a file-system key (`sessionFileKey`) was made from; undefined when it is no such key
 * or a part was too long and shortened (a hash cannot be read back).
 */
export function chatOfFileKey(key: string): Chat | undefined {
  const at = key.indexOf(':');
  if (at < 0 || key.includes('~')) return undefined;
  try {
    return { channel: decodeURIComponent(key.slice(0, at)), chatId: decodeURIComponent(key.slice(at + 1)) };
  } catch {
    return undefined;
  }
}

/** True when `candidate` is `base` itself or lies below it (both absolute). */
export function isInside(base: string, candidate: string): boolean {
  const rel = path.relative(base, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * The checks of `resolveInside` made on the name alone, without the file system (no link is
 * followed): `relative` resolved inside `base`, or refused (storage.path_escape) when it is
 * absolute, holds a NUL byte or leads out with `..`. A store that keeps no folder (PostgreSQL)
 * refuses the names a folder would, this way.
 */
export function resolveLexically(base: string, relative: string): string {
  if (relative.includes('\0')) throw new AppError('storage.path_escape', { reason: 'path contains a NUL byte' });
  if (path.isAbsolute(relative)) throw new AppError('storage.path_escape', { reason: `absolute paths are not allowed: ${relative}` });
  const resolved = path.resolve(base, relative);
  if (!isInside(base, resolved)) throw new AppError('storage.path_escape', { reason: `path leaves the memory directory: ${relative}` });
  return resolved;
}

/**
 * Resolves a relative path given by the model inside `base`. Refuses absolute paths, `..`
 * escapes, NUL bytes, and symlinks whose target lies outside `base`. With `root`, `base`
 * itself must also lie inside `root` once links are followed (a chat's memory folder that is
 * a link out of the memory folder is refused).
 */
export async function resolveInside(base: string, relative: string, root?: string): Promise<string> {
  const resolved = resolveLexically(base, relative);
  // A folder that does not exist yet is judged by its nearest existing ancestor, like the file.
  const [real, realBase, realRoot] = await Promise.all([
    realpathOfNearest(resolved),
    realpathOfNearest(base),
    root === undefined || root === base ? undefined : realpathOfNearest(root),
  ]);
  if (!isInside(realBase, real)) throw new AppError('storage.path_escape', { reason: `path is a link to outside the memory directory: ${relative}` });
  if (realRoot !== undefined && !isInside(realRoot, realBase)) {
    throw new AppError('storage.path_escape', { reason: `the memory directory is a link to outside the memory folder: ${relative}` });
  }
  return resolved;
}

/**
 * The real path of `p`, following links: for a path that does not exist yet, the real path of
 * its nearest existing ancestor plus the remaining parts; a dangling link is followed to its target.
 */
async function realpathOfNearest(p: string, depth = 0): Promise<string> {
  if (depth > 40) throw new AppError('storage.path_escape', { reason: 'too many symbolic links' });
  const rest: string[] = [];
  let cur = p;
  for (;;) {
    try {
      return path.join(await realpath(cur), ...rest);
    } catch {
      try {
        // A link whose target is missing: judge it by where it points.
        const target = await readlink(cur);
        return await realpathOfNearest(path.join(path.resolve(path.dirname(cur), target), ...rest), depth + 1);
      } catch {
        /* not a link */
      }
      const parent = path.dirname(cur);
      if (parent === cur) return path.join(cur, ...rest);
      rest.unshift(path.basename(cur));
      cur = parent;
    }
  }
}
