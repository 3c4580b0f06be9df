/**
 * One small text value a process keeps across starts that is no store's rows — the memory
 * page's token, the Telegram channel's open placeholders: a file of the workspace (written
 * atomically), or with DATABASE_URL a row of `kept_values` (storage/pg/kept-pg.ts), so that a
 * process with a fresh workspace finds it. app/stores.ts chooses which.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ensureDir, writeFileAtomic } from './atomic.js';

export interface KeptValue {
  /** Where it is kept, for messages to the owner: a file's path, or the database's row. */
  readonly where: string;
  /** The value kept, exactly as written; undefined when none is. */
  read(): Promise<string | undefined>;
  /** Replaces it; kept when it resolves. */
  write(value: string): Promise<void>;
  /** Keeps `value` unless a value is kept already; returns the value kept (the first writer's, when two start at once). */
  keepFirst(value: string): Promise<string>;
}

/** The value as one file (mode 0600, as every file writeFileAtomic writes). */
export class FileKeptValue implements KeptValue {
  constructor(readonly where: string) {}

  async read(): Promise<string | undefined> {
    try {
      return await readFile(this.where, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async write(value: string): Promise<void> {
    await ensureDir(path.dirname(this.where));
    await writeFileAtomic(this.where, value);
  }

  async keepFirst(value: string): Promise<string> {
    // One process per workspace (the daemon lock): nobody writes between the read and the write.
    const kept = await this.read();
    if (kept !== undefined) return kept;
    await this.write(value);
    return value;
  }
}
