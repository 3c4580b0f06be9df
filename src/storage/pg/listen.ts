/**
 * PostgreSQL's LISTEN/NOTIFY for the stores whose readers are synchronous and whose state
 * another process may change (runtime settings: the owner, or a second daemon): the store keeps
 * the state in memory and reads it again when told it changed.
 *
 * One connection of its own per process (LISTEN holds a session, so it cannot be a pooled one;
 * it is not counted in DATABASE_POOL_SIZE). A notification sent while that connection is down is
 * lost, so after every (re)connect each handler is called as if notified: the store reads its
 * state again and misses nothing. A connection that cannot be made or is lost is retried with
 * capped, jittered back-off, for as long as the process runs; `listen` never fails for an outage.
 */
import pg from 'pg';
import { backoffDelay } from '../../core/retry.js';
import type { Logger } from '../../core/log.js';
import { AppError } from '../../core/errors.js';
import { DbError, toDbError } from './errors.js';

/** A channel name is an identifier in LISTEN: plain names only, spelled by our code. */
const CHANNEL = /^[a-z_][a-z0-9_]*$/;
const CONNECT_TIMEOUT_MS = 10_000;

export class PgListener {
  private readonly handlers = new Map<string, Set<(payload?: string) => void>>();
  private client: pg.Client | undefined;
  private listening = new Set<string>();
  /** Connects, LISTENs and reconnects run one at a time. */
  private chain: Promise<void> = Promise.resolve();
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  private readonly url: string;
  private readonly where: string;
  private readonly log: Logger;
  private readonly applicationName: string;

  /** `where`: the database as logs name it (no password); `applicationName`: the connection's name in pg_stat_activity. */
  constructor(opts: { url: string; where: string; log: Logger; applicationName: string }) {
    ({ url: this.url, where: this.where, log: this.log, applicationName: this.applicationName } = opts);
  }

  /**
   * Calls `onChange` after each NOTIFY on `channel` (with its payload), and after each reconnect
   * (without: notifications may have been missed). Resolves once the
   * LISTEN is in place — or, when the database cannot be reached now, once the retries are
   * under way (the first connect calls `onChange`). The returned function stops it.
   */
  async listen(channel: string, onChange: (payload?: string) => void): Promise<() => void> {
    if (!CHANNEL.test(channel)) throw new AppError('internal.bug', { problem: `not a plain notification channel name: ${channel}` });
    if (this.closed) throw new AppError('internal.bug', { problem: 'listen after close' });
    let set = this.handlers.get(channel);
    if (!set) this.handlers.set(channel, (set = new Set()));
    set.add(onChange);
    await this.serial(async () => {
      if (!this.client) {
        if (!this.timer) await this.connect().catch((err: unknown) => this.retryLater(err));
      } else if (!this.listening.has(channel)) {
        await this.client.query(`LISTEN ${channel}`).catch((err: unknown) => this.log.debug({ err: toDbError(err, this.where).message }, 'LISTEN failed'));
        this.listening.add(channel);
      }
    });
    return () => set.delete(onChange);
  }

  /** Ends the connection and the retries. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.serial(async () => {
      const client = this.client;
      this.client = undefined;
      await client?.end().catch(() => undefined);
    });
  }

  private serial(step: () => Promise<void>): Promise<void> {
    const run = this.chain.then(step);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** A new connection listening on every channel with a handler. Throws when it cannot be made. */
  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      application_name: this.applicationName,
      keepAlive: true,
    });
    // A lost connection is reported by 'end' (after 'error'): an unheard 'error' would end the process.
    client.on('error', () => {});
    client.on('end', () => this.lost(client));
    client.on('notification', (msg) => this.notify(msg.channel, msg.payload));
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.listening = new Set(this.handlers.keys());
  }

  private notify(channel: string, payload?: string): void {
    for (const fn of this.handlers.get(channel) ?? []) {
      try {
        fn(payload);
      } catch (err) {
        this.log.error({ err, channel }, 'a change notification handler failed');
      }
    }
  }

  private lost(client: pg.Client): void {
    if (client !== this.client || this.closed) return;
    this.client = undefined;
    this.retryLater(new DbError('unreachable', this.where, 'the listening connection was lost', undefined, undefined));
  }

  private retryLater(err: unknown): void {
    if (this.closed) return;
    if (this.failures++ === 0)
      this.log.warn(
        { where: this.where, err: toDbError(err, this.where).message },
        'not listening for database changes, retrying… (settings changed meanwhile are read when back)',
      );
    this.timer = setTimeout(() => void this.serial(() => this.reconnect()), backoffDelay(this.failures, 100, 5_000, Math.random));
    this.timer.unref();
  }

  private async reconnect(): Promise<void> {
    this.timer = undefined;
    if (this.closed || this.client) return;
    try {
      await this.connect();
    } catch (err) {
      this.retryLater(err);
      return;
    }
    this.log.info({ where: this.where }, 'listening for database changes again');
    this.failures = 0;
    // A notification sent while away may be lost (a new listener starts where the other
    // processes' listeners are): every store reads its state again.
    for (const channel of this.handlers.keys()) this.notify(channel);
  }
}
