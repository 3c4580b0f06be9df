/**
 * How the index rides out a memory.db it cannot use for a while, so chat goes on: another
 * process holding the lock, a damaged page, a full disk — and the scrub after /forget, which
 * holds writes while a worker rewrites the file. The facade (memory-index.ts) runs every
 * guarded call through `run`; messages that could not be written wait here (bounded) and are
 * written once the file works again or the scrub ends.
 */
import type { Logger } from '../core/log.js';
import { errorMessage } from '../core/errors.js';
import type { EpisodeInput } from './store/repository.js';

/** Messages kept while memory.db cannot take them; more are left to the sessions and notes. */
const MAX_PENDING = 5_000;

/**
 * SQLite's own failures: the file is locked, damaged, full or unreadable. These are what the
 * guard absorbs (chat goes on without the index); anything else — a TypeError, a constraint or
 * SQL error from our own code — is a bug and is rethrown so a test or the turn's wrap sees it.
 */
const SQLITE_FAILURES = [
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
  'SQLITE_FULL',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY',
  'SQLITE_PROTOCOL',
  'SQLITE_NOMEM',
  'SQLITE_PERM',
  'SQLITE_INTERRUPT',
];

/** The SQLite code of a failure the index rides out, or undefined for anything else. */
export function sqliteFailure(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  // Extended codes (SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_WRITE, …) share their family's prefix.
  return SQLITE_FAILURES.some((f) => code === f || code.startsWith(`${f}_`)) ? code : undefined;
}

/** A message not written yet, with what its caller does once it is (the embedder queues it). */
export interface HeldEpisode {
  e: EpisodeInput;
  saved?: ((id: string) => void) | undefined;
}

export class OutageGuard {
  /** How long the index rests after finding memory.db locked by another process. */
  pauseMs = 30_000;
  /** Until when it rests (ms since epoch). */
  private pausedUntil = 0;
  /** What failed first in the current outage (null: no outage). */
  private failing: string | null = null;
  /** Episodes not written yet (file locked, or a scrub holding writes). */
  private readonly pending: HeldEpisode[] = [];
  /** The scrub running in a worker: writes are held until it ends. */
  private scrubbing: Promise<void> | null = null;

  /** `replay` writes held episodes again (the facade's saveEpisode); `isOpen` says the file is still open. */
  constructor(
    private readonly log: Logger,
    private readonly replay: (held: HeldEpisode) => void,
    private readonly isOpen: () => boolean,
  ) {}

  /** A scrub holds writes now. */
  get holding(): boolean {
    return this.scrubbing !== null;
  }

  /**
   * Runs `fn`. A failure is logged once per outage (not once per message), and the next success
   * of the same kind of call logs the recovery: while another process holds a write lock, reads
   * still work (WAL), and a search that succeeds must not end an outage of writes (the warning
   * would repeat after every pause). A locked file pauses the index for a while instead of
   * making every message wait for the lock. Only SQLite's own failures are absorbed (see
   * `sqliteFailure`); a bug in `fn` surfaces.
   */
  run<T>(what: string, fallback: T, fn: () => T, write = false): T {
    if (Date.now() < this.pausedUntil) return fallback;
    if (write && this.scrubbing) {
      this.log.debug({ what }, `${what} skipped: memory.db is being scrubbed after /forget`);
      return fallback;
    }
    try {
      const out = fn();
      if (this.failing === what) {
        this.failing = null;
        this.log.info('memory.db works again');
        this.replayHeld();
      }
      return out;
    } catch (err) {
      const code = sqliteFailure(err);
      if (code === undefined) throw err;
      const busy = code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
      if (busy) this.pausedUntil = Date.now() + this.pauseMs;
      if (this.failing === null) {
        this.failing = what;
        this.log.warn(
          { what, code, err: errorMessage(err) },
          busy
            ? `memory.db is locked by another process; indexing pauses for ${Math.round(this.pauseMs / 1000)} s at a time until it is free (messages stay in sessions and notes)`
            : `${what} failed; continuing without it until it works again`,
        );
      } else {
        this.log.debug({ what, err: errorMessage(err) }, `${what} failed`);
      }
      return fallback;
    }
  }

  /** Keeps a message that could not be written now, when an outage or a scrub is the reason (bounded). */
  hold(held: HeldEpisode): void {
    if ((this.failing || this.scrubbing) && this.pending.length < MAX_PENDING) this.pending.push(held);
  }

  /** Holds writes while `scrub` runs (one at a time: waits for a running one first), then writes what waited. */
  async during(scrub: () => Promise<void>): Promise<void> {
    // No await when nothing runs: the hold starts in the caller's tick (a message right after
    // the call is held). Checked again after each wait, as two /forget may be waiting.
    while (this.scrubbing) await this.scrubbing.catch(() => undefined);
    const run = scrub();
    this.scrubbing = run;
    try {
      await run;
    } finally {
      this.scrubbing = null;
      this.replayHeld();
    }
  }

  /** Resolves when no scrub holds writes (callers that write through the unguarded surfaces wait on it). */
  async whenWritable(): Promise<void> {
    // Checked again after each wait, as two /forget may be waiting.
    while (this.scrubbing) await this.scrubbing.catch(() => undefined);
  }

  private replayHeld(): void {
    const items = this.pending.splice(0);
    if (items.length === 0) return;
    if (!this.isOpen()) {
      this.log.warn({ episodes: items.length }, 'memory.db closed before the messages held for it were indexed; they stay in the sessions and notes');
      return;
    }
    for (const held of items) this.replay(held);
    this.log.info({ episodes: items.length }, 'indexed the messages that arrived while memory.db was locked or being scrubbed');
  }
}
