/**
 * The memory page's access token: MEMORY_PAGE_TOKEN, or a random one made on first start and
 * kept in `workspace/.memory-page-token` (mode 0600) — with DATABASE_URL in the database
 * (`kept_values`, app/stores.ts), so a process with a fresh workspace serves the same one — so
 * the link stays valid across restarts and `npm run doctor` can print it again. Compared in
 * constant time.
 */
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import path from 'node:path';
import { FileKeptValue, type KeptValue } from '../storage/kept.js';

export const TOKEN_FILE = '.memory-page-token';
/** Its name among the database's kept values (storage/pg/kept-pg.ts). */
export const TOKEN_NAME = 'memory-page-token';

/** Where the token is kept without DATABASE_URL. */
export function tokenFile(workspaceDir: string): KeptValue {
  return new FileKeptValue(path.join(workspaceDir, TOKEN_FILE));
}

/** A token as kept: its line, without the newline; too short to be one of ours is none. */
function kept(text: string | undefined): string | undefined {
  const t = text?.trim();
  return t && t.length >= 16 ? t : undefined;
}

export interface PageToken {
  token: string;
  /** Made just now: main prints it once. */
  created: boolean;
}

export async function readStoredToken(store: KeptValue): Promise<string | undefined> {
  return kept(await store.read().catch(() => undefined));
}

export async function resolvePageToken(store: KeptValue, configured: string | undefined): Promise<PageToken> {
  if (configured) return { token: configured, created: false };
  const stored = await readStoredToken(store);
  if (stored) return { token: stored, created: false };
  const made = randomBytes(24).toString('base64url');
  // A file is written 0600. Another process that made one first (same database) wins: one link for all.
  const token = kept(await store.keepFirst(`${made}\n`)) ?? made;
  return { token, created: token === made };
}

/** Constant-time equality (hashes first, so lengths do not leak either). */
export function sameToken(given: string | undefined, token: string): boolean {
  if (!given) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}
