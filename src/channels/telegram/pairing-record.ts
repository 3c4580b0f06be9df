/**
 * A PairingStore (pairing.ts) kept as one record that a store reads, and changes by
 * read-modify-write under its own lock — the file store under a file lock (pairing-file.ts),
 * the PostgreSQL store in a transaction holding the row (pairing-pg.ts). Here: the rules
 * (PairingRules) applied the same way for both; a store gives the reading, the writing and
 * its answer to "is this user / group approved?".
 */
import type { Portable } from '../../storage/portable.js';
import {
  emptyPairing,
  PairingRules,
  type ApprovedGroup,
  type ApprovedUser,
  type PairingData,
  type PairingOptions,
  type PairingRequestResult,
  type PairingStore,
  type PendingPairing,
  type TelegramUserRef,
  type WaitingStranger,
} from './pairing.js';

/** The order the rules write each entry's fields in (pairing.ts), the file's order. */
const FIELDS = {
  approved: ['userId', 'username', 'name', 'approvedAt', 'code'],
  pending: ['userId', 'username', 'name', 'chatId', 'code', 'createdAt', 'expiresAt'],
  waiting: ['userId', 'username', 'name', 'chatId', 'reason', 'since', 'lastAt', 'retryAfter'],
  groups: ['chatId', 'title', 'approvedAt', 'approvedBy'],
  told: ['chatId', 'title', 'at'],
} as const;

/**
 * The record with each entry's fields in the order the rules write them (fields it does not
 * know after those, as they came): jsonb keeps no order of its own, and a record moved from
 * pairing.json into PostgreSQL and back is to be written as it was.
 */
export function inWrittenOrder(data: PairingData): PairingData {
  const order = <T extends object>(entries: T[], fields: readonly string[]): T[] =>
    entries.map((e) => {
      const out: Record<string, unknown> = {};
      for (const f of fields) if (Object.hasOwn(e, f)) out[f] = (e as Record<string, unknown>)[f];
      return Object.assign(out, e) as T;
    });
  return {
    version: 1,
    approved: order(data.approved, FIELDS.approved),
    pending: order(data.pending, FIELDS.pending),
    waiting: order(data.waiting, FIELDS.waiting),
    groups: order(data.groups, FIELDS.groups),
    told: order(data.told, FIELDS.told),
  };
}

/** Whether a record holds nothing (no user, code, stranger or group). */
export function isEmptyPairing(data: PairingData): boolean {
  return data.approved.length + data.pending.length + data.waiting.length + data.groups.length + data.told.length === 0;
}

/**
 * A PairingStore kept as one record, and what moves between the modes (storage/portable.ts):
 * the record as stored — expired codes included (the next start prunes them as it would have).
 */
export abstract class PairingRecordStore implements PairingStore, Portable<PairingData> {
  readonly portableName = 'pairing';
  protected readonly rules: PairingRules;

  constructor(opts: PairingOptions = {}) {
    this.rules = new PairingRules(opts);
  }

  /** The record as stored now (no lock). */
  protected abstract read(): Promise<PairingData>;
  /** Runs `change` on the record under the store's lock (with applyChange), storing it when it changed. */
  protected abstract update<T>(change: (data: PairingData) => T): Promise<T>;
  abstract isApproved(userId: string): Promise<boolean>;
  abstract isGroupApproved(chatId: string): Promise<boolean>;

  request(user: TelegramUserRef & { chatId: string }): Promise<PairingRequestResult> {
    return this.update((data) => this.rules.request(data, user));
  }

  approve(rawCode: string): Promise<ApprovedUser | null> {
    return this.update((data) => this.rules.approve(data, rawCode));
  }

  revoke(idOrUsername: string): Promise<boolean> {
    return this.update((data) => this.rules.revoke(data, idOrUsername));
  }

  async list(): Promise<{ approved: ApprovedUser[]; pending: PendingPairing[]; waiting: WaitingStranger[]; groups: ApprovedGroup[] }> {
    const data = this.rules.prune(await this.read());
    return { approved: data.approved, pending: data.pending, waiting: data.waiting, groups: data.groups };
  }

  approveGroup(group: { chatId: string; title?: string | undefined; by: string }): Promise<boolean> {
    return this.update((data) => this.rules.approveGroup(data, group));
  }

  markTold(group: { chatId: string; title?: string | undefined }): Promise<boolean> {
    return this.update((data) => this.rules.markTold(data, group));
  }

  async *dump(): AsyncIterable<PairingData> {
    const data = await this.read();
    if (!isEmptyPairing(data)) yield data;
  }

  /** Stores the (last) record given, whole. */
  async load(items: AsyncIterable<PairingData>): Promise<number> {
    let n = 0;
    for await (const data of items) {
      await this.replace(inWrittenOrder(data));
      n++;
    }
    return n;
  }

  async isEmpty(): Promise<boolean> {
    return isEmptyPairing(await this.read());
  }

  async clear(): Promise<void> {
    await this.replace(emptyPairing());
  }

  /** Stores this record in place of the one kept (under the store's lock). */
  protected abstract replace(data: PairingData): Promise<void>;

  /** One change of the record as read under the lock: expired codes pruned, then `change`; `changed` when anything did (the prune included). */
  protected applyChange<T>(raw: PairingData, change: (data: PairingData) => T): { result: T; data: PairingData; changed: boolean } {
    // Taken before the prune, so an expired code moving to the backlog is written too.
    const before = JSON.stringify(raw);
    const data = this.rules.prune(raw);
    const result = change(data);
    return { result, data, changed: JSON.stringify(data) !== before };
  }
}
