/**
 * PendingWrites (pending.ts) in one file of the workspace, `memory-pending.json`: every held
 * write of every chat, oldest first. Each change reads, changes and rewrites the file under its
 * lock (temp + fsync + rename), dropping the writes that expired meanwhile, so a forgotten or
 * expired write leaves no byte in it. The file goes when nothing is held.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { ensureDir, withFileLock, writeFileAtomic } from '../storage/atomic.js';
import { WORKSPACE_FILES } from '../storage/workspace-files.js';
import { AppError } from '../core/errors.js';
import { byHeld, expired, pendingTexts, type PendingWrite, type PendingWrites } from './pending.js';

const fileText = (writes: PendingWrite[]) => `${JSON.stringify({ writes }, null, 2)}\n`;

export class FilePendingWrites implements PendingWrites {
  readonly portableName = 'held memory writes';

  static inWorkspace(workspaceDir: string): FilePendingWrites {
    return new FilePendingWrites(path.join(workspaceDir, WORKSPACE_FILES.pendingWrites));
  }

  constructor(readonly file: string) {}

  private async read(): Promise<PendingWrite[]> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    try {
      const writes = (JSON.parse(text) as { writes?: unknown }).writes;
      return Array.isArray(writes) ? (writes as PendingWrite[]) : [];
    } catch (err) {
      throw new AppError('storage.corrupt', { file: path.basename(this.file), problem: (err as Error).message }, { cause: err });
    }
  }

  /** Read-modify-write under the lock; the expired go first; written only when something changed. */
  private async change<T>(now: Date, fn: (writes: PendingWrite[]) => { writes: PendingWrite[]; result: T }): Promise<T> {
    await ensureDir(path.dirname(this.file));
    return withFileLock(this.file, async () => {
      const before = await this.read();
      const live = before.filter((w) => !expired(w, now));
      const { writes, result } = fn(live);
      if (writes.length !== before.length || writes.some((w, i) => w !== before[i])) {
        if (writes.length === 0) await rm(this.file, { force: true });
        else await writeFileAtomic(this.file, fileText(writes));
      }
      return result;
    });
  }

  hold(write: PendingWrite): Promise<void> {
    return this.change(new Date(), (writes) => ({ writes: [...writes, write].sort(byHeld), result: undefined }));
  }

  list(scope: string, now = new Date()): Promise<PendingWrite[]> {
    return this.change(now, (writes) => ({ writes, result: writes.filter((w) => w.scope === scope) }));
  }

  take(scope: string, id: string, now = new Date()): Promise<PendingWrite | undefined> {
    return this.change(now, (writes) => {
      const found = writes.find((w) => w.scope === scope && w.id === id);
      return { writes: writes.filter((w) => w !== found), result: found };
    });
  }

  async matching(scope: string, test: (text: string) => boolean): Promise<number> {
    return (await this.read()).filter((w) => w.scope === scope && pendingTexts(w).some(test)).length;
  }

  forget(scope: string, test: (text: string) => boolean): Promise<number> {
    return this.change(new Date(), (writes) => {
      const keep = writes.filter((w) => !(w.scope === scope && pendingTexts(w).some(test)));
      return { writes: keep, result: writes.length - keep.length };
    });
  }

  async chats(): Promise<string[]> {
    return [...new Set((await this.read()).map((w) => `${w.channel}:${w.chatId}`))];
  }

  erase(channel: string, chatId: string): Promise<number> {
    return this.change(new Date(), (writes) => {
      const keep = writes.filter((w) => !(w.channel === channel && w.chatId === chatId));
      return { writes: keep, result: writes.length - keep.length };
    });
  }

  async *dump(): AsyncIterable<PendingWrite> {
    yield* await this.read();
  }

  async load(items: AsyncIterable<PendingWrite>): Promise<number> {
    const all: PendingWrite[] = [];
    for await (const w of items) all.push(w);
    await this.change(new Date(0), (writes) => ({ writes: [...writes, ...all].sort(byHeld), result: undefined }));
    return all.length;
  }

  async isEmpty(): Promise<boolean> {
    return (await this.read()).length === 0;
  }

  async clear(): Promise<void> {
    await withFileLock(this.file, () => rm(this.file, { force: true }));
  }
}
