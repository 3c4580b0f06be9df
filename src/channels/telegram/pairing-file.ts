/**
 * FilePairingStore: the PairingStore (pairing.ts) in `workspace/telegram/pairing.json`, written
 * atomically under a file lock, because two processes change it: the daemon (codes, /allow) and
 * the `pair` command (approvals, revocations). The rules are applied by PairingRecordStore
 * (pairing-record.ts); this file only reads, locks and writes.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ensureDir, withFileLock, writeFileAtomic } from '../../storage/atomic.js';
import { AppError } from '../../core/errors.js';
import { emptyPairing, toPairingData, type PairingData, type PairingOptions } from './pairing.js';
import { PairingRecordStore } from './pairing-record.js';
import { telegramFile } from './files.js';

export function pairingFile(workspaceDir: string): string {
  return telegramFile(workspaceDir, 'pairing');
}

/** The file's text for a record. */
const recordText = (data: PairingData) => `${JSON.stringify(data, null, 2)}\n`;

export class FilePairingStore extends PairingRecordStore {
  private cache: { key: string; approved: Set<string>; groups: Set<string> } | undefined;

  /** The workspace's pairing (the Telegram channel, `npm run pair`, purge). */
  static inWorkspace(workspaceDir: string, opts: PairingOptions = {}): FilePairingStore {
    return new FilePairingStore(pairingFile(workspaceDir), opts);
  }

  constructor(
    readonly file: string,
    opts: PairingOptions = {},
  ) {
    super(opts);
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

  protected async read(): Promise<PairingData> {
    try {
      return toPairingData(JSON.parse(await readFile(this.file, 'utf8')) as Partial<PairingData>);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return emptyPairing();
      throw new AppError('pairing.unreadable', { file: this.file, reason: (err as Error).message }, { cause: err });
    }
  }

  protected async replace(data: PairingData): Promise<void> {
    await ensureDir(path.dirname(this.file));
    await withFileLock(this.file, () => writeFileAtomic(this.file, recordText(data)));
  }

  /** Read-modify-write under the inter-process lock. */
  protected async update<T>(fn: (data: PairingData) => T): Promise<T> {
    await ensureDir(path.dirname(this.file));
    return withFileLock(this.file, async () => {
      const { result, data, changed } = this.applyChange(await this.read(), fn);
      if (changed) await writeFileAtomic(this.file, recordText(data));
      return result;
    });
  }
}
