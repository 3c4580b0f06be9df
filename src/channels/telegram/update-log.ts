/**
 * Inbound dedup: every update id the daemon has taken, persisted in
 * `workspace/telegram/updates.json` *before* the update is handled, so an update is processed
 * at most once — also when Telegram sends it again after a restart (an offset that was never
 * confirmed) or re-posts a webhook call we answered too late.
 *
 * Why a set of recent ids and not only "the highest id seen": Telegram picks a random next id
 * after a week without updates, which may be lower than the last one; webhook calls can also
 * arrive out of order. Ids are kept for 7 days (at most `maxEntries`), far longer than
 * Telegram keeps an unconfirmed update (24 h).
 *
 * The channel sees UpdateLog; its promises are the contract tests in
 * test/channels/telegram/update-log.contract.ts. Today's store is FileUpdateLog; PgUpdateLog
 * (update-log-pg.ts) keeps the ids in PostgreSQL. (Polling keeps
 * no state of its own: the offset it sends confirms a batch to Telegram, which keeps the rest.)
 */
import { readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../core/log.js';
import { ensureDir, withFileLock, writeFileAtomic } from '../../storage/atomic.js';
import { AppError } from '../../core/errors.js';
import type { Portable } from '../../storage/portable.js';
import { telegramFile } from './files.js';

interface UpdateLogFile {
  version: 1;
  /** [update_id, time taken (ms since epoch)], oldest first. */
  seen: Array<[number, number]>;
}

/** Ids are remembered for 7 days (far longer than Telegram keeps an unconfirmed update, 24 h), at most 5000 in memory. */
export const UPDATE_LOG_MAX_AGE_MS = 7 * 24 * 3600_000;
export const UPDATE_LOG_MAX_ENTRIES = 5000;

export interface UpdateLogOptions {
  maxEntries?: number;
  maxAgeMs?: number;
  now?: () => number;
}

/** The options with their defaults. */
export function updateLogLimits(opts: UpdateLogOptions): Required<UpdateLogOptions> {
  return { maxEntries: opts.maxEntries ?? UPDATE_LOG_MAX_ENTRIES, maxAgeMs: opts.maxAgeMs ?? UPDATE_LOG_MAX_AGE_MS, now: opts.now ?? Date.now };
}

export interface UpdateLog {
  /** Reads what was taken before (at start, before the first update). */
  load(): Promise<void>;
  /** Whether this id was taken (and is still remembered). */
  has(updateId: number): boolean;
  /** How many ids are remembered. */
  readonly size: number;
  /**
   * Records these ids as taken and returns the ones not taken before (in the given order).
   * The record is stored when this resolves; calls at the same time each take an id once.
   */
  admit(updateIds: number[]): Promise<Set<number>>;
  /** What moves between the modes (`npm run memory -- migrate`): the ids as stored, with when each was taken. */
  portable(): Portable<TakenUpdate>;
}

/** The ids in `workspace/telegram/updates.json`, held in memory, rewritten whole (atomic, locked) by each admit. */
export class FileUpdateLog implements UpdateLog {
  private readonly seen = new Map<number, number>();
  private chain: Promise<unknown> = Promise.resolve();
  private readonly maxEntries: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  /** The workspace's update log (the Telegram channel). */
  static inWorkspace(workspaceDir: string, log: Logger): FileUpdateLog {
    return new FileUpdateLog(telegramFile(workspaceDir, 'updates'), log);
  }

  constructor(
    readonly file: string,
    private readonly log: Logger,
    opts: UpdateLogOptions = {},
  ) {
    ({ maxEntries: this.maxEntries, maxAgeMs: this.maxAgeMs, now: this.now } = updateLogLimits(opts));
  }

  async load(): Promise<void> {
    await ensureDir(path.dirname(this.file));
    try {
      for (const [id, at] of await readSeen(this.file)) this.seen.set(id, at);
    } catch (err) {
      // A damaged file must not stop the bot; set it aside so it can be looked at.
      const aside = `${this.file}.corrupt-${this.now()}`;
      await rename(this.file, aside).catch(() => undefined);
      this.log.error({ err, file: this.file, aside }, 'update log could not be parsed; set aside, starting empty');
    }
  }

  /**
   * What moves between the modes (storage/portable.ts): the ids on disk with the time each was
   * taken, oldest first — so the first start in the other mode does not handle again the last
   * batch, which Telegram sends again (its offset was not confirmed). A view of its own, since
   * `load` here means reading the log.
   */
  portable(): Portable<TakenUpdate> {
    const file = this.file;
    const write = (seen: Array<[number, number]>) =>
      withFileLock(file, () => writeFileAtomic(file, `${JSON.stringify({ version: 1, seen } satisfies UpdateLogFile)}\n`));
    return {
      portableName: "Telegram's update log",
      dump: async function* () {
        for (const [updateId, takenAt] of await readSeen(file)) yield { updateId, takenAt };
      },
      load: async (items) => {
        const seen = new Map(await readSeen(file));
        let n = 0;
        for await (const { updateId, takenAt } of items) {
          seen.set(updateId, takenAt);
          n++;
        }
        await ensureDir(path.dirname(file));
        await write([...seen].sort((a, b) => a[1] - b[1]));
        return n;
      },
      isEmpty: async () => (await readSeen(file)).length === 0,
      clear: () => rm(file, { force: true }),
    };
  }

  has(updateId: number): boolean {
    return this.seen.has(updateId);
  }

  get size(): number {
    return this.seen.size;
  }

  /** The record is on disk when this resolves; calls are serialized. */
  admit(updateIds: number[]): Promise<Set<number>> {
    const run = this.chain.then(() => this.admitNow(updateIds));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async admitNow(updateIds: number[]): Promise<Set<number>> {
    const fresh = new Set<number>();
    for (const id of updateIds) if (!this.seen.has(id)) fresh.add(id);
    if (fresh.size === 0) return fresh;
    const at = this.now();
    for (const id of fresh) this.seen.set(id, at);
    forgetOldIds(this.seen, at, this.maxEntries, this.maxAgeMs);
    const data: UpdateLogFile = { version: 1, seen: [...this.seen.entries()] };
    try {
      await withFileLock(this.file, () => writeFileAtomic(this.file, `${JSON.stringify(data)}\n`));
    } catch (err) {
      // Not recorded means not taken: the caller may see these ids again and try once more.
      for (const id of fresh) this.seen.delete(id);
      throw err;
    }
    return fresh;
  }
}

/** An update id taken, and when (ms since the epoch). */
export interface TakenUpdate {
  updateId: number;
  takenAt: number;
}

/** The ids in an update log file, oldest first (none when there is no file); throws when it is damaged. */
async function readSeen(file: string): Promise<Array<[number, number]>> {
  let raw: string;
  try {
    raw = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const parsed = JSON.parse(raw) as UpdateLogFile;
  if (!Array.isArray(parsed.seen)) throw new AppError('storage.corrupt', { file: 'update log', problem: 'seen is not a list' });
  return parsed.seen.filter((e) => Array.isArray(e) && Number.isInteger(e[0]) && typeof e[1] === 'number');
}

/** Forgets the oldest ids of `seen` (id → time taken, oldest first) beyond `maxEntries` or older than `maxAgeMs`. */
export function forgetOldIds(seen: Map<number, number>, now: number, maxEntries: number, maxAgeMs: number): void {
  for (const [id, at] of seen) {
    if (seen.size <= maxEntries && now - at <= maxAgeMs) break;
    seen.delete(id);
  }
}
