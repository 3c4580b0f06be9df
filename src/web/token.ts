/**
 * The memory page's access token: MEMORY_PAGE_TOKEN, or a random one made on first start and
 * kept in `workspace/.memory-page-token` (mode 0600), so the link stays valid across restarts
 * and `npm run doctor` can print it again. Compared in constant time.
 */
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ensureDir, writeFileAtomic } from '../storage/atomic.js';

export const TOKEN_FILE = '.memory-page-token';

export interface PageToken {
  token: string;
  /** Made just now: main prints it once. */
  created: boolean;
}

export async function readStoredToken(workspaceDir: string): Promise<string | undefined> {
  try {
    const t = (await readFile(path.join(workspaceDir, TOKEN_FILE), 'utf8')).trim();
    return t.length >= 16 ? t : undefined;
  } catch {
    return undefined;
  }
}

export async function resolvePageToken(workspaceDir: string, configured: string | undefined): Promise<PageToken> {
  if (configured) return { token: configured, created: false };
  const stored = await readStoredToken(workspaceDir);
  if (stored) return { token: stored, created: false };
  const token = randomBytes(24).toString('base64url');
  await ensureDir(workspaceDir);
  await writeFileAtomic(path.join(workspaceDir, TOKEN_FILE), `${token}\n`); // written 0600
  return { token, created: true };
}

/** Constant-time equality (hashes first, so lengths do not leak either). */
export function sameToken(given: string | undefined, token: string): boolean {
  if (!given) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}
