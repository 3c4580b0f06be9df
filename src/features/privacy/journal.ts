/**
 * The record of a forget or a purge under way, one file per change in its folder of the
 * workspace (`forgetting/`, `purging/`), so that one cut short by a kill is finished at the next
 * start instead of leaving part of what was asked for behind:
 *
 *   begin    written (fsynced: temp, fsync, rename) before anything is removed;
 *   update   rewritten (as durably) when a start takes it up again, counting `attempt`, and
 *            when it is finished — a forget's record then without its words;
 *   end      deleted once the change is done and nobody is left to tell.
 *
 * A change is run `MAX_ATTEMPTS` times at most: one that dies at every start (it may be what
 * kills the process) is given up and said so, never retried for ever.
 *
 * `ChangeJournal` is what forget.ts and purge.ts rely on; `PrivacyJournal` keeps it in files,
 * `PgPrivacyJournal` (journal-pg.ts) in PostgreSQL with DATABASE_URL (app/stores.ts chooses).
 */
import { readFile, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ensureDir, removeStaleTempFiles, writeFileAtomic } from '../../storage/atomic.js';
import type { Logger } from '../../core/log.js';

/** Runs that may begin one change: it is taken up again once after a kill, then given up. */
export const MAX_ATTEMPTS = 2;

/** What every record holds: its chat and how many runs began the change. */
export interface JournalRecord {
  channel: string;
  chatId: string;
  /** Runs that began it: 1 for the run that recorded it, one more for each start that took it up again. */
  attempt: number;
}

/** The records of changes under way (see the top of this file). */
export interface ChangeJournal<T extends JournalRecord> {
  /** Records a change about to begin; durable when it resolves. Returns its id. */
  begin(record: T): Promise<string>;
  /** Rewrites a record, as durably. */
  update(id: string, record: T): Promise<void>;
  /** The change is done: its record goes (no byte of it left). */
  end(id: string): Promise<void>;
  /** The records an earlier run left, at start; one that cannot be read is removed (nothing could be done with it). */
  left(): Promise<Array<{ id: string; record: T }>>;
}

/** What every record must hold to be taken up again; anything else was not written by begin/update. */
export function readableRecord<T extends JournalRecord>(text: string): T | undefined {
  try {
    const record = JSON.parse(text) as T;
    if (typeof record?.channel !== 'string' || typeof record.chatId !== 'string') return undefined;
    return { ...record, attempt: Number(record.attempt) || 0 };
  } catch {
    return undefined;
  }
}

/** A record's id: random, so two processes never pick the same. */
export const newRecordId = (): string => randomBytes(6).toString('hex');

/** The journal as one file per record in its folder of the workspace. */
export class PrivacyJournal<T extends JournalRecord> implements ChangeJournal<T> {
  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  private file(id: string): string {
    return path.join(this.dir, `${id}.json`);
  }

  /** Records a change about to begin; durable when it resolves. Returns its id. */
  async begin(record: T): Promise<string> {
    const id = newRecordId();
    await ensureDir(this.dir);
    await writeFileAtomic(this.file(id), JSON.stringify(record));
    return id;
  }

  /** Rewrites a record, as durably. */
  async update(id: string, record: T): Promise<void> {
    await writeFileAtomic(this.file(id), JSON.stringify(record));
  }

  /** The change is done: its record goes. */
  async end(id: string): Promise<void> {
    await unlink(this.file(id)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  /**
   * The records an earlier run left. Called at start, before anything else writes here: a temp
   * file a kill left mid-write (a forget's may hold words) is removed, and so is a record that
   * cannot be read (nothing could be done with it).
   */
  async left(): Promise<Array<{ id: string; record: T }>> {
    await removeStaleTempFiles(this.dir, 0);
    const names = (await readdir(this.dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json'));
    const out: Array<{ id: string; record: T }> = [];
    for (const name of names) {
      const id = name.slice(0, -'.json'.length);
      const record = await readFile(this.file(id), 'utf8').then(readableRecord<T>, () => undefined);
      if (record) out.push({ id, record });
      else {
        this.log.error({ file: path.join(path.basename(this.dir), name) }, 'a record of a change under way could not be read; removed');
        await this.end(id);
      }
    }
    return out;
  }
}
