/**
 * Pairing: how a stranger becomes a user without editing settings. A private message from
 * someone not allowed gets a one-time code (8 characters, valid 1 hour, at most 3 pending at
 * once); the owner approves it with `npm run pair -- approve <CODE>`. Two processes use the
 * record: the daemon (codes) and the `pair` command (approvals), so every change is one
 * read-modify-write under the store's lock.
 * The groups an owner approved from Telegram (`/allow`: group-gate.ts) are kept there too, with
 * the unserved groups whose owner was already told how to turn them on.
 *
 * Slots cannot be hogged: a code that expires unapproved is not renewed for its user for a
 * day, however often they write, so a freed slot goes to someone new. Strangers turned away
 * (no free slot) or waiting out an expired code are the backlog `pair -- list` shows; it is
 * written at most every few minutes per stranger, so a flood of messages is not a flood of writes.
 *
 * Here: what callers see (PairingStore; its promises are the contract tests in
 * test/channels/telegram/pairing.contract.ts) and the rules above as changes of one record
 * (PairingRules), for any store to apply inside its own transaction. Today's store is
 * FilePairingStore (pairing-file.ts: `workspace/telegram/pairing.json`); PgPairingStore
 * (pairing-pg.ts) keeps it in PostgreSQL. Both apply the rules through PairingRecordStore (pairing-record.ts).
 */
import { randomInt } from 'node:crypto';

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

/** A stranger who wrote and got no code: no free slot, or their code expired unapproved. */
export interface WaitingStranger extends TelegramUserRef {
  chatId: string;
  reason: 'full' | 'expired';
  /** First refusal, or when the code expired. */
  since: string;
  /** Last message seen (updated at most every few minutes). */
  lastAt: string;
  /** 'expired': no new code before this time. */
  retryAfter?: string | undefined;
}

/** A group an owner let in with /allow (served as if listed in TELEGRAM_ALLOWED_GROUPS). */
export interface ApprovedGroup {
  chatId: string;
  title?: string | undefined;
  approvedAt: string;
  /** The owner's user id. */
  approvedBy: string;
}

/** An unserved group whose owner was told how to turn it on (told once). */
export interface ToldGroup {
  chatId: string;
  title?: string | undefined;
  at: string;
}

/** Everything pairing keeps, as one record. */
export interface PairingData {
  version: 1;
  approved: ApprovedUser[];
  pending: PendingPairing[];
  waiting: WaitingStranger[];
  groups: ApprovedGroup[];
  told: ToldGroup[];
}

export type PairingRequestResult =
  | { status: 'created'; code: string; expiresAt: string }
  | { status: 'pending'; code: string; expiresAt: string }
  | { status: 'full' }
  | { status: 'cooldown'; retryAfter: string }
  | { status: 'approved' };

export interface PairingOptions {
  ttlMs?: number;
  maxPending?: number;
  /** How long a user whose code expired unapproved waits for a new one (ms). */
  cooldownMs?: number;
  now?: () => number;
}

/** Backlog entries older than this are forgotten; the list keeps at most MAX_WAITING. */
const WAITING_KEEP_MS = 24 * 3600_000;
const MAX_WAITING = 100;
/** A stranger's "last seen" is rewritten at most this often. */
const WAITING_TOUCH_MS = 10 * 60_000;
/** Unserved groups remembered as told; the oldest are forgotten first (told once more, at worst). */
const MAX_TOLD = 200;

export function newPairingCode(): string {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

export interface PairingStore {
  /** A stranger wrote: a new code, the code they already have, "full", or "cooldown" (their code expired). */
  request(user: TelegramUserRef & { chatId: string }): Promise<PairingRequestResult>;
  /** Approves a pending code (any case, spaces ignored). Null when it is unknown or expired. */
  approve(rawCode: string): Promise<ApprovedUser | null>;
  /**
   * Removes an approval (and any pending code) by user id or @username, or a group's approval by
   * its id (the group's owner is then told again how to turn it on). True if anything was removed.
   */
  revoke(idOrUsername: string): Promise<boolean>;
  list(): Promise<{ approved: ApprovedUser[]; pending: PendingPairing[]; waiting: WaitingStranger[]; groups: ApprovedGroup[] }>;
  /** An owner's /allow: the group is served from its next message on. False when it already was approved. */
  approveGroup(group: { chatId: string; title?: string | undefined; by: string }): Promise<boolean>;
  /** Records that an unserved group's owner was told how to turn it on: true the first time only. */
  markTold(group: { chatId: string; title?: string | undefined }): Promise<boolean>;
  /** Is this user approved? A change made by another process applies from the next call. */
  isApproved(userId: string): Promise<boolean>;
  /** Is this group approved (/allow)? Like isApproved: a revocation applies at the next message. */
  isGroupApproved(chatId: string): Promise<boolean>;
}

export function emptyPairing(): PairingData {
  return { version: 1, approved: [], pending: [], waiting: [], groups: [], told: [] };
}

/** A stored record as PairingData: entries without their key are dropped, missing lists are empty. */
export function toPairingData(parsed: Partial<PairingData>): PairingData {
  return {
    version: 1,
    approved: Array.isArray(parsed.approved) ? parsed.approved.filter((a) => a && typeof a.userId === 'string') : [],
    pending: Array.isArray(parsed.pending) ? parsed.pending.filter((p) => p && typeof p.code === 'string') : [],
    waiting: Array.isArray(parsed.waiting)
      ? parsed.waiting.filter((w) => w && typeof w.userId === 'string' && typeof w.lastAt === 'string' && Number.isFinite(Date.parse(w.lastAt)))
      : [],
    groups: Array.isArray(parsed.groups) ? parsed.groups.filter((g) => g && typeof g.chatId === 'string') : [],
    told: Array.isArray(parsed.told) ? parsed.told.filter((t) => t && typeof t.chatId === 'string') : [],
  };
}

/**
 * The rules of pairing as changes of one record: each method changes `data` in place and
 * returns the answer. A store runs `prune` and then one of them inside one read-modify-write.
 */
export class PairingRules {
  private readonly ttlMs: number;
  private readonly maxPending: number;
  private readonly cooldownMs: number;
  private readonly now: () => number;

  constructor(opts: PairingOptions = {}) {
    this.ttlMs = opts.ttlMs ?? 3600_000;
    this.maxPending = opts.maxPending ?? 3;
    this.cooldownMs = opts.cooldownMs ?? 24 * 3600_000;
    this.now = opts.now ?? Date.now;
  }

  request(data: PairingData, user: TelegramUserRef & { chatId: string }): PairingRequestResult {
    if (data.approved.some((a) => a.userId === user.userId)) return { status: 'approved' };
    const mine = data.pending.find((p) => p.userId === user.userId);
    if (mine) return { status: 'pending', code: mine.code, expiresAt: mine.expiresAt };
    const now = this.now();
    const waiting = data.waiting.find((w) => w.userId === user.userId);
    if (waiting?.retryAfter && Date.parse(waiting.retryAfter) > now) {
      this.touch(waiting, user, now);
      return { status: 'cooldown', retryAfter: waiting.retryAfter };
    }
    if (data.pending.length >= this.maxPending) {
      if (waiting) this.touch(waiting, user, now);
      else
        this.addWaiting(data, {
          ...clean(user),
          chatId: user.chatId,
          reason: 'full',
          since: new Date(now).toISOString(),
          lastAt: new Date(now).toISOString(),
        });
      return { status: 'full' };
    }
    data.waiting = data.waiting.filter((w) => w.userId !== user.userId);
    const taken = new Set(data.pending.map((p) => p.code));
    let code = newPairingCode();
    while (taken.has(code)) code = newPairingCode();
    const expiresAt = new Date(now + this.ttlMs).toISOString();
    data.pending.push({ ...clean(user), chatId: user.chatId, code, createdAt: new Date(now).toISOString(), expiresAt });
    return { status: 'created', code, expiresAt };
  }

  /** "Last seen" of a waiting stranger, rewritten only every few minutes (each change is a write). */
  private touch(w: WaitingStranger, user: TelegramUserRef, now: number): void {
    if (now - Date.parse(w.lastAt) < WAITING_TOUCH_MS) return;
    w.lastAt = new Date(now).toISOString();
    if (user.username) w.username = user.username;
  }

  private addWaiting(data: PairingData, w: WaitingStranger): void {
    data.waiting = data.waiting.filter((x) => x.userId !== w.userId);
    data.waiting.push(w);
    // Bounded: the oldest-seen go first.
    if (data.waiting.length > MAX_WAITING) {
      data.waiting.sort((a, b) => Date.parse(a.lastAt) - Date.parse(b.lastAt));
      data.waiting.splice(0, data.waiting.length - MAX_WAITING);
    }
  }

  approve(data: PairingData, rawCode: string): ApprovedUser | null {
    const code = normalizeCode(rawCode);
    const i = data.pending.findIndex((p) => p.code === code);
    if (i < 0) return null;
    const p = data.pending[i]!;
    data.pending.splice(i, 1);
    const approved: ApprovedUser = { ...clean(p), approvedAt: new Date(this.now()).toISOString(), code };
    data.approved = data.approved.filter((a) => a.userId !== p.userId);
    data.approved.push(approved);
    data.waiting = data.waiting.filter((w) => w.userId !== p.userId);
    return approved;
  }

  revoke(data: PairingData, idOrUsername: string): boolean {
    const key = idOrUsername.trim().replace(/^@/, '').toLowerCase();
    const matches = (u: TelegramUserRef) => u.userId === key || (u.username ?? '').toLowerCase() === key;
    const before = data.approved.length + data.pending.length + data.groups.length;
    data.approved = data.approved.filter((a) => !matches(a));
    data.pending = data.pending.filter((p) => !matches(p));
    data.waiting = data.waiting.filter((w) => !matches(w));
    data.groups = data.groups.filter((g) => g.chatId !== key);
    data.told = data.told.filter((t) => t.chatId !== key);
    return data.approved.length + data.pending.length + data.groups.length < before;
  }

  approveGroup(data: PairingData, group: { chatId: string; title?: string | undefined; by: string }): boolean {
    if (data.groups.some((g) => g.chatId === group.chatId)) return false;
    data.groups.push({
      chatId: group.chatId,
      ...(group.title ? { title: group.title } : {}),
      approvedAt: new Date(this.now()).toISOString(),
      approvedBy: group.by,
    });
    return true;
  }

  markTold(data: PairingData, group: { chatId: string; title?: string | undefined }): boolean {
    if (data.told.some((t) => t.chatId === group.chatId)) return false;
    data.told.push({ chatId: group.chatId, ...(group.title ? { title: group.title } : {}), at: new Date(this.now()).toISOString() });
    if (data.told.length > MAX_TOLD) data.told.splice(0, data.told.length - MAX_TOLD);
    return true;
  }

  /** Expired codes leave their slot and put their user in the backlog until the cooldown is over. */
  prune(data: PairingData): PairingData {
    const now = this.now();
    for (const p of data.pending) {
      const expiry = Date.parse(p.expiresAt);
      if (expiry > now) continue;
      this.addWaiting(data, {
        ...clean(p),
        chatId: p.chatId,
        reason: 'expired',
        since: p.expiresAt,
        lastAt: new Date(Math.min(now, expiry)).toISOString(),
        retryAfter: new Date(expiry + this.cooldownMs).toISOString(),
      });
    }
    data.pending = data.pending.filter((p) => Date.parse(p.expiresAt) > now);
    data.waiting = data.waiting.filter((w) => (w.retryAfter ? Date.parse(w.retryAfter) > now : now - Date.parse(w.lastAt) < WAITING_KEEP_MS));
    return data;
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
