/**
 * Pairing: how a stranger becomes a user without editing settings. A private message from
 * someone not allowed gets a one-time code (8 characters, valid 1 hour, at most 3 pending at
 * once); the owner approves it with `npm run pair -- approve <CODE>`. Approvals and pending
 * codes live in `workspace/telegram/pairing.json`, written atomically under a file lock
 * because two processes use it: the daemon (codes) and the `pair` command (approvals).
 */
import { randomInt } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ensureDir, withFileLock, writeFileAtomic } from '../../storage/atomic.js';

/** No 0/O, 1/I/L: codes are read aloud and typed by hand. */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
export const CODE_LENGTH = 8;

export interface TelegramUserRef {
  userId: string;
  username?: string | undefined;
  name?: string | undefined;
}

export interface PendingPairing extends TelegramUserRef {
  code: string;
  chatId: string;
  createdAt: string;
  expiresAt: string;
}

export interface ApprovedUser extends TelegramUserRef {
  approvedAt: string;
  code?: string | undefined;
}

interface PairingFile {
  version: 1;
  approved: ApprovedUser[];
  pending: PendingPairing[];
}

export type PairingRequestResult =
  | { status: 'created'; code: string; expiresAt: string }
  | { status: 'pending'; code: string; expiresAt: string }
  | { status: 'full' }
  | { status: 'approved' };

export interface PairingOptions {
  ttlMs?: number;
  maxPending?: number;
  now?: () => number;
}

export function pairingFile(workspaceDir: string): string {
  return path.join(workspaceDir, 'telegram', 'pairing.json');
}

export function newPairingCode(): string {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

export class PairingStore {
  private readonly ttlMs: number;
  private readonly maxPending: number;
  private readonly now: () => number;
  private cache: { key: string; approved: Set<string> } | undefined;

  constructor(
    readonly file: string,
    opts: PairingOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 3600_000;
    this.maxPending = opts.maxPending ?? 3;
    this.now = opts.now ?? Date.now;
  }

  /** A stranger wrote: a new code, the code they already have, or "full". */
  async request(user: TelegramUserRef & { chatId: string }): Promise<PairingRequestResult> {
    return this.update((data) => {
      if (data.approved.some((a) => a.userId === user.userId)) return { status: 'approved' };
      const mine = data.pending.find((p) => p.userId === user.userId);
      if (mine) return { status: 'pending', code: mine.code, expiresAt: mine.expiresAt };
      if (data.pending.length >= this.maxPending) return { status: 'full' };
      const taken = new Set(data.pending.map((p) => p.code));
      let code = newPairingCode();
      while (taken.has(code)) code = newPairingCode();
      const now = this.now();
      const expiresAt = new Date(now + this.ttlMs).toISOString();
      data.pending.push({ ...clean(user), chatId: user.chatId, code, createdAt: new Date(now).toISOString(), expiresAt });
      return { status: 'created', code, expiresAt };
    });
  }

  /** Approves a pending code (any case, spaces ignored). Null when it is unknown or expired. */
  async approve(rawCode: string): Promise<ApprovedUser | null> {
    const code = normalizeCode(rawCode);
    return this.update((data) => {
      const i = data.pending.findIndex((p) => p.code === code);
      if (i < 0) return null;
      const p = data.pending[i]!;
      data.pending.splice(i, 1);
      const approved: ApprovedUser = { ...clean(p), approvedAt: new Date(this.now()).toISOString(), code };
      data.approved = data.approved.filter((a) => a.userId !== p.userId);
      data.approved.push(approved);
      return approved;
    });
  }

  /** Removes an approval (and any pending code) by user id or @username. True if anything was removed. */
  async revoke(idOrUsername: string): Promise<boolean> {
    const key = idOrUsername.trim().replace(/^@/, '').toLowerCase();
    const matches = (u: TelegramUserRef) => u.userId === key || (u.username ?? '').toLowerCase() === key;
    return this.update((data) => {
      const before = data.approved.length + data.pending.length;
      data.approved = data.approved.filter((a) => !matches(a));
      data.pending = data.pending.filter((p) => !matches(p));
      return data.approved.length + data.pending.length < before;
    });
  }

  async list(): Promise<{ approved: ApprovedUser[]; pending: PendingPairing[] }> {
    const data = this.prune(await this.read());
    return { approved: data.approved, pending: data.pending };
  }

  /**
   * Is this user approved? Re-reads the file only when it changed (the `pair` command writes
   * it from another process), so an approval or a revocation takes effect on the next message.
   */
  async isApproved(userId: string): Promise<boolean> {
    let key = 'missing';
    try {
      const st = await stat(this.file);
      key = `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch {
      /* no file yet */
    }
    if (this.cache?.key !== key) {
      const data = await this.read();
      this.cache = { key, approved: new Set(data.approved.map((a) => a.userId)) };
    }
    return this.cache.approved.has(userId);
  }

  private async read(): Promise<PairingFile> {
    try {
      const parsed = JSON.parse(await readFile(this.file, 'utf8')) as Partial<PairingFile>;
      return {
        version: 1,
        approved: Array.isArray(parsed.approved) ? parsed.approved.filter((a) => a && typeof a.userId === 'string') : [],
        pending: Array.isArray(parsed.pending) ? parsed.pending.filter((p) => p && typeof p.code === 'string') : [],
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, approved: [], pending: [] };
      throw new Error(`${this.file} could not be read (${(err as Error).message}); fix or delete it`, { cause: err });
    }
  }

  private prune(data: PairingFile): PairingFile {
    const now = this.now();
    data.pending = data.pending.filter((p) => Date.parse(p.expiresAt) > now);
    return data;
  }

  /** Read-modify-write under the inter-process lock. */
  private async update<T>(fn: (data: PairingFile) => T): Promise<T> {
    await ensureDir(path.dirname(this.file));
    return withFileLock(this.file, async () => {
      const data = this.prune(await this.read());
      const before = JSON.stringify(data);
      const result = fn(data);
      const after = JSON.stringify(data, null, 2);
      if (JSON.stringify(data) !== before) await writeFileAtomic(this.file, `${after}\n`);
      return result;
    });
  }
}

export function normalizeCode(raw: string): string {
  return raw.replace(/[\s-]/g, '').toUpperCase();
}

function clean(u: TelegramUserRef): TelegramUserRef {
  return {
    userId: u.userId,
    ...(u.username ? { username: u.username } : {}),
    ...(u.name ? { name: u.name } : {}),
  };
}
