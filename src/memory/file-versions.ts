/**
 * FileMemoryVersions, the versions of one scope's MEMORY.md (versions.ts) as files in its memory
 * folder: `versions/{n}.md` is a version's full text, `versions/index.json` the list (when, what
 * made it, entries added and removed) and the rewrite guard's refusals. FileMemoryFiles calls
 * `record` under MEMORY.md's lock, before the new text is written.
 */
import { readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { ensureDir, withFileLock, writeFileAtomic } from '../storage/atomic.js';
import { readRegular } from '../storage/regular.js';
import { resolveInside } from '../storage/paths.js';
import { recordVersion, undoTargetIn, withoutLines, type MemoryVersions, type RefusalInfo, type Refusals, type VersionInfo } from './versions.js';

export const VERSIONS_DIR = 'versions';

interface IndexFile {
  version: 1;
  next: number;
  entries: VersionInfo[];
  refused: Refusals;
}

const empty = (): IndexFile => ({ version: 1, next: 1, entries: [], refused: { count: 0 } });

/** The versions in `versions/`: `{n}.md` holds a version's text, `index.json` the list and the refusals. */
export class FileMemoryVersions implements MemoryVersions {
  readonly dir: string;
  private readonly indexFile: string;

  /** `root`: the memory folder versions/ must stay inside once links are followed (as the chat's folder must). */
  constructor(
    private readonly memoryDir: string,
    private readonly root: string = memoryDir,
  ) {
    this.dir = path.join(memoryDir, VERSIONS_DIR);
    this.indexFile = path.join(this.dir, 'index.json');
  }

  /** Refused (storage.path_escape) when versions/ (or the chat's folder) is a link out of the memory folder. */
  private inside(): Promise<string> {
    return resolveInside(this.memoryDir, VERSIONS_DIR, this.root);
  }

  private textFile(n: number): string {
    return path.join(this.dir, `${n}.md`);
  }

  private async load(): Promise<IndexFile> {
    await this.inside();
    return this.readIndex();
  }

  /** index.json as it is (the caller has checked the folder is inside the chat's). */
  private async readIndex(): Promise<IndexFile> {
    try {
      // Only a regular file: a FIFO named index.json would hold a thread for good.
      const raw = JSON.parse(await readRegular(this.indexFile)) as Partial<IndexFile>;
      if (!Array.isArray(raw.entries)) return empty();
      return { version: 1, next: raw.next ?? 1, entries: raw.entries, refused: raw.refused ?? { count: 0 } };
    } catch {
      return empty();
    }
  }

  private async withIndex<T>(fn: (idx: IndexFile) => Promise<T>): Promise<T> {
    await this.inside();
    await ensureDir(this.dir);
    return withFileLock(this.indexFile, async () => {
      const idx = await this.readIndex();
      const out = await fn(idx);
      await writeFileAtomic(this.indexFile, `${JSON.stringify(idx, null, 1)}\n`);
      return out;
    });
  }

  /** Newest first. */
  async list(): Promise<VersionInfo[]> {
    return [...(await this.load()).entries].reverse();
  }

  async read(n: number): Promise<string | undefined> {
    const idx = await this.load();
    if (!idx.entries.some((e) => e.n === n)) return undefined;
    // Opened only if it is a regular file (a FIFO named 3.md would hold a thread).
    return readRegular(this.textFile(n)).catch(() => undefined);
  }

  async refusals(): Promise<Refusals> {
    return (await this.load()).refused;
  }

  async noteRefusal(r: RefusalInfo): Promise<void> {
    await this.withIndex(async (idx) => {
      idx.refused = { count: idx.refused.count + 1, last: r };
    });
  }

  /**
   * Called by MemoryFiles under MEMORY.md's lock, before `after` replaces `before` on disk.
   * Returns the new version's number.
   */
  async record(before: string, after: string, source: string): Promise<number> {
    return this.withIndex(async (idx) => {
      const last = idx.entries.at(-1);
      const lastText = last ? await readRegular(this.textFile(last.n)).catch(() => undefined) : undefined;
      const { added, dropped } = recordVersion(idx, lastText, before, after, source);
      for (const { n, text } of added) await writeFileAtomic(this.textFile(n), text);
      for (const n of dropped) await unlink(this.textFile(n)).catch(() => undefined);
      return added.at(-1)!.n;
    });
  }

  /**
   * What `/memory undo` restores: the text before the newest change not yet undone (undos
   * themselves are skipped, so repeated undos walk further back).
   */
  async undoTarget(): Promise<{ change: VersionInfo; restore: VersionInfo } | undefined> {
    return undoTargetIn((await this.load()).entries);
  }

  /**
   * Removes every line for which `drop` is true from every stored version (atomic rewrite of
   * each file). Returns how many lines were removed.
   */
  async redact(drop: (line: string) => boolean): Promise<number> {
    let removed = 0;
    let names: string[];
    await this.inside();
    try {
      names = await readdir(this.dir);
    } catch {
      return 0;
    }
    await this.withIndex(async (idx) => {
      for (const name of names) {
        if (!/^\d+\.md$/.test(name)) continue;
        const file = path.join(this.dir, name);
        const cut = withoutLines(await readRegular(file).catch(() => ''), drop);
        if (cut.removed === 0) continue;
        removed += cut.removed;
        await writeFileAtomic(file, cut.text);
        const e = idx.entries.find((x) => `${x.n}.md` === name);
        if (e) e.bytes = Buffer.byteLength(cut.text);
      }
    });
    return removed;
  }
}
