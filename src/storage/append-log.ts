/**
 * One append-only file kept open between writes: the inbox journal and the session log each
 * write a line or two per message, so an open, write and close per line would cost more than
 * the write. Writes run one after another in call order; a failed write drops the handle so the
 * next one reopens the file (it may have been replaced). `replaceIf` swaps the whole file
 * (temp file, fsync, rename) at a point in that order, so nothing appended before the decision
 * is cut away and nothing appended after it is lost.
 */
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { writeFileAtomic } from './atomic.js';
import { PRIVATE_FILE_MODE } from '../core/private.js';

export class AppendLog {
  private chain: Promise<unknown> = Promise.resolve();
  private fh: FileHandle | null = null;
  private written = 0;

  constructor(readonly file: string) {}

  /** Bytes appended since this process opened the log or last replaced it. */
  get bytes(): number {
    return this.written;
  }

  /** Appends `text`; with `sync`, resolves only once it is fsynced. */
  append(text: string, sync: boolean): Promise<void> {
    return this.serial(async () => {
      this.fh ??= await open(this.file, 'a', PRIVATE_FILE_MODE);
      try {
        await this.fh.write(text);
        if (sync) await this.fh.sync();
      } catch (err) {
        await this.closeHandle();
        throw err;
      }
      this.written += Buffer.byteLength(text);
    });
  }

  /**
   * Runs `decide` after every append queued so far; if it returns a text, the file is replaced
   * by it atomically before any later append. Resolves true when it was replaced.
   */
  replaceIf(decide: () => Promise<string | null> | string | null): Promise<boolean> {
    let replaced = false;
    return this.serial(async () => {
      const content = await decide();
      if (content === null) return;
      await writeFileAtomic(this.file, content);
      // The open handle still points at the replaced file: the next append opens the new one.
      await this.closeHandle();
      this.written = 0;
      replaced = true;
    }).then(() => replaced);
  }

  /**
   * Rewrites the whole file through `transform` (its current text → the new text, or null to
   * leave it), in order with appends: used to take forgotten words out of a log.
   */
  rewrite(transform: (text: string) => string | null): Promise<boolean> {
    return this.replaceIf(async () => {
      let text: string;
      try {
        text = await readFile(this.file, 'utf8');
      } catch {
        return null;
      }
      const next = transform(text);
      return next === null || next === text ? null : next;
    });
  }

  /** Closes the file (shutdown); the next append reopens it. */
  shutdown(): Promise<void> {
    return this.serial(() => this.closeHandle());
  }

  private async closeHandle(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    await fh?.close().catch(() => undefined);
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }
}
