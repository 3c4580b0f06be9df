/**
 * FilePairingStore: the PairingStore (pairing.ts) in `workspace/telegram/pairing.json`, written
 * atomically under a file lock, because two processes change it: the daemon (codes, /allow) and
 * the `pair` command (approvals, revocations). The rules are PairingRules; this file only reads,
 * locks and writes.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ensureDir, withFileLock, writeFileAtomic } from '../../storage/atomic.js';
import { AppError } from '../../core/errors.js';
import {
  PairingRules,
  emptyPairing,
  toPairingData,
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
import { telegramFile } from './files.js';

export function pairingFile(workspaceDir: string): string {
  return telegramFile(workspaceDir, 'pairing');
}

export class FilePairingStore implements PairingStore {
  private readonly rules: PairingRules;
  private cache: { key: string; approved: Set<string>; groups: Set<string> } | undefined;

  /** The workspace's pairing (the Telegram channel, `npm run pair`, purge). */
  static inWorkspace(workspaceDir: string, opts: PairingOptions = {}): FilePairingStore {
    return new FilePairingStore(pairingFile(workspaceDir), opts);
  }

  constructor(
    readonly file: string,
    opts: PairingOptions = {},
  ) {
    this.rules = new PairingRules(opts);
  }

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

  /** Re-reads the file only when it changed (the `pair` command writes it from another process). */
  async isApproved(userId: string): Promise<boolean> {
    return (await this.current()).approved.has(userId);
  }

  async isGroupApproved(chatId: string): Promise<boolean> {
    return (await this.current()).groups.has(chatId);
  }

  private async current(): Promise<{ approved: Set<string>; groups: Set<string> }> {
    let key = 'missing';
    try {
      const st = await stat(this.file);
      key = `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch {
      /* no file yet */
    }
    if (this.cache?.key !== key) {
      const data = await this.read();
      this.cache = { key, approved: new Set(data.approved.map((a) => a.userId)), groups: new Set(data.groups.map((g) => g.chatId)) };
    }
    return this.cache;
  }

  private async read(): Promise<PairingData> {
    try {
      return toPairingData(JSON.parse(await readFile(this.file, 'utf8')) as Partial<PairingData>);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return emptyPairing();
      throw new AppError('pairing.unreadable', { file: this.file, reason: (err as Error).message }, { cause: err });
    }
  }

  /** Read-modify-write under the inter-process lock. */
  private async update<T>(fn: (data: PairingData) => T): Promise<T> {
    await ensureDir(path.dirname(this.file));
    return withFileLock(this.file, async () => {
      const raw = await this.read();
      // Taken before the prune, so an expired code moving to the backlog is written too.
      const before = JSON.stringify(raw);
      const data = this.rules.prune(raw);
      const result = fn(data);
      const after = JSON.stringify(data, null, 2);
      if (JSON.stringify(data) !== before) await writeFileAtomic(this.file, `${after}\n`);
      return result;
    });
  }
}
