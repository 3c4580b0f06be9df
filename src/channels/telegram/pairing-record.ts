/**
 * A PairingStore (pairing.ts) kept as one record that a store reads, and changes by
 * read-modify-write under its own lock — the file store under a file lock (pairing-file.ts),
 * the PostgreSQL store in a transaction holding the row (pairing-pg.ts). Here: the rules
 * (PairingRules) applied the same way for both; a store gives the reading, the writing and
 * its answer to "is this user / group approved?".
 */
import {
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

export abstract class PairingRecordStore implements PairingStore {
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

  /** One change of the record as read under the lock: expired codes pruned, then `change`; `changed` when anything did (the prune included). */
  protected applyChange<T>(raw: PairingData, change: (data: PairingData) => T): { result: T; data: PairingData; changed: boolean } {
    // Taken before the prune, so an expired code moving to the backlog is written too.
    const before = JSON.stringify(raw);
    const data = this.rules.prune(raw);
    const result = change(data);
    return { result, data, changed: JSON.stringify(data) !== before };
  }
}
