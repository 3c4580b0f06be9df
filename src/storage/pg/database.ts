/**
 * The one way the daemon talks to PostgreSQL (DATABASE_URL): a pool of DATABASE_POOL_SIZE
 * connections, single statements (`query`) and transactions (`tx`), and one policy for a
 * database that is down or restarting — every call waits it out with the project's retry helper
 * (capped, jittered back-off), the log says "database unreachable, retrying…" once per outage and
 * "database back" when it answers again, and `health()` says which, since when (for /status and
 * doctor). Only when the wait runs out (`waitMs`) does a call fail, with `database.unreachable`.
 *
 * What is rerun, and why that is safe:
 * - `query()` is rerun after a lost connection: one statement that may have run already, so it
 *   is for reads and for writes that are the same done twice (an upsert, a delete by key).
 * - `tx(fn)` is rerun whole after a lost connection before its COMMIT (the server rolls back a
 *   transaction whose connection is gone) and after a serialization failure or deadlock (40001,
 *   40P01: PostgreSQL's own advice). `fn` may therefore run more than once: only database work
 *   through the `sql` it is given belongs in it. A connection lost during the COMMIT itself
 *   leaves its outcome unknown; the transaction's id, taken just before, is looked up once the
 *   database answers again (`pg_xact_status`): committed, its result is returned; else it is
 *   run again. So a transaction is applied once, never twice and never lost unreported.
 *
 * The URL's password never reaches a log line: it is registered as a log secret here, and lines
 * name the database by host, port and name only.
 */
import pg from 'pg';
import { backoffDelay, withRetry } from '../../core/retry.js';
import { registerSecret, type Logger } from '../../core/log.js';
import { DbError, toDbError } from './errors.js';
import { databaseSecrets, describeDatabase } from './url.js';
import { PgListener } from './listen.js';

export type Row = Record<string, unknown>;

export interface Rows<R extends Row = Row> {
  rows: R[];
  /** Rows the statement returned or changed. */
  rowCount: number;
}

/** What runs statements: the database (`query`), or one transaction's connection (the `sql` given to `tx`'s function). */
export interface Sql {
  query<R extends Row = Row>(text: string, params?: readonly unknown[]): Promise<Rows<R>>;
}

export interface TxOptions {
  /** PostgreSQL's default is read committed; serializable transactions are rerun on conflict. */
  isolation?: 'read committed' | 'repeatable read' | 'serializable';
}

export interface Health {
  /** unknown: not asked yet; up: its last answer came; down: unreachable since `since`. */
  state: 'unknown' | 'up' | 'down';
  /** When the state began (ms since the epoch). */
  since: number;
  /** While down: why, in one line (no password). */
  error?: string;
}

export interface DatabaseOptions {
  /** DATABASE_URL. */
  url: string;
  /** DATABASE_POOL_SIZE: connections at most. */
  poolSize: number;
  log: Logger;
  /** How long one call waits for an unreachable database before failing (ms). */
  waitMs?: number;
  /** Shown in pg_stat_activity. */
  applicationName?: string;
}

/** Reruns of a transaction that keeps meeting conflicts, before `database.rejected`. */
const CONFLICT_RERUNS = 5;
/** A connection that is not made within this counts as unreachable (waiting for a free one in the pool does not). */
const CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_WAIT_MS = 60_000;

type Outcome<T> = { xid: string; result: T };

export class Database implements Sql {
  /** `host:port/database`: how logs and /status name it. */
  readonly where: string;
  private readonly pool: pg.Pool;
  private readonly url: string;
  private readonly applicationName: string;
  private listener: PgListener | undefined;
  private readonly log: Logger;
  private readonly waitMs: number;
  private state: Health = { state: 'unknown', since: Date.now() };
  /** Counts the changes of `state`. */
  private changes = 0;

  constructor(opts: DatabaseOptions) {
    for (const s of databaseSecrets(opts.url)) registerSecret(s);
    this.where = describeDatabase(opts.url);
    this.url = opts.url;
    this.applicationName = opts.applicationName ?? 'membot';
    this.log = opts.log;
    this.waitMs = opts.waitMs ?? DEFAULT_WAIT_MS;
    // pg-pool times out a wait for a free connection with the same setting as a connect: the
    // clients get the connect timeout, the pool none, so a busy pool is not mistaken for an outage.
    class Client extends pg.Client {
      constructor(config?: pg.ClientConfig) {
        super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
      }
    }
    this.pool = new pg.Pool({
      connectionString: opts.url,
      max: opts.poolSize,
      application_name: this.applicationName,
      keepAlive: true,
      Client,
    });
    // An idle connection the server closed (a restart, idle_session_timeout): the pool drops it
    // and the next call opens another. Without a listener the error would end the process.
    this.pool.on('error', (err) => this.log.debug({ where: this.where, err: toDbError(err, this.where).message }, 'idle database connection closed'));
  }

  health(): Health {
    return { ...this.state };
  }

  query<R extends Row = Row>(text: string, params?: readonly unknown[]): Promise<Rows<R>> {
    return this.waitingOut(() => this.withClient((sql) => sql.query<R>(text, params)));
  }

  /** Runs `fn` in one transaction on one connection: COMMIT when it returns, ROLLBACK when it throws (its error is rethrown). */
  tx<T>(fn: (sql: Sql) => Promise<T>, opts: TxOptions = {}): Promise<T> {
    const begin = opts.isolation ? `BEGIN ISOLATION LEVEL ${opts.isolation.toUpperCase()}` : 'BEGIN';
    let uncertain: Outcome<T> | undefined;
    return this.waitingOut(async () => {
      if (uncertain) {
        const { rows } = await this.withClient((sql) => sql.query<{ status: string | null }>('SELECT pg_xact_status($1::xid8) AS status', [uncertain!.xid]));
        const status = rows[0]?.status;
        if (status === 'committed') return uncertain.result;
        // Still finishing on a connection the server has not yet noticed is gone: ask again.
        if (status === 'in progress')
          throw new DbError('unreachable', this.where, 'a transaction cut off during COMMIT is still finishing', undefined, undefined);
        // Only a transaction known to have failed is run again; "no record" cannot be decided.
        if (status !== 'aborted')
          throw new DbError(
            'rejected',
            this.where,
            `a transaction was cut off during COMMIT and its outcome cannot be known (${status})`,
            undefined,
            undefined,
          );
        uncertain = undefined;
      }
      return this.withClient(async (sql) => {
        await sql.query(begin);
        const result = await fn(sql);
        const { rows } = await sql.query<{ xid: string | null }>('SELECT pg_current_xact_id_if_assigned()::text AS xid');
        const xid = rows[0]?.xid ?? null;
        try {
          await sql.query('COMMIT');
        } catch (err) {
          // A transaction that wrote nothing has no id and nothing to lose: it is simply rerun.
          if (xid !== null && err instanceof DbError && err.kind === 'unreachable') uncertain = { xid, result };
          throw err;
        }
        return result;
      }, true);
    });
  }

  /**
   * Calls `onChange` when a NOTIFY arrives on `channel`, with its payload — and after every
   * reconnect of the listening connection, without one, as notifications sent meanwhile are lost
   * (listen.ts). The returned function stops it.
   */
  listen(channel: string, onChange: (payload?: string) => void): Promise<() => void> {
    this.listener ??= new PgListener({ url: this.url, where: this.where, log: this.log, applicationName: `${this.applicationName}-listen` });
    return this.listener.listen(channel, onChange);
  }

  /** Closes every connection; calls after this fail. */
  async close(): Promise<void> {
    // Both at once: the pool stops handing out connections now, not after the listener is gone.
    await Promise.all([this.listener?.close(), this.pool.end()]);
  }

  /**
   * Runs `attempt` until it passes, waiting out an unreachable database (up to `waitMs` from the
   * first failure) and rerunning conflicts a few times; anything else is thrown at once.
   */
  private async waitingOut<T>(attempt: () => Promise<T>): Promise<T> {
    let downSince: number | undefined;
    let conflicts = 0;
    // The state an attempt began under: only an answer to a request sent since the last change
    // may change it (a reply already on its way when the server went down is not "back").
    let seen = this.changes;
    const result = await withRetry(
      () => {
        seen = this.changes;
        return attempt();
      },
      {
        retries: Number.POSITIVE_INFINITY,
        baseDelayMs: 100,
        maxDelayMs: 5_000,
        classify: (err) => {
          if (!(err instanceof DbError)) return { retry: false };
          if (err.kind !== 'unreachable') {
            this.markUp(seen);
            // Conflicts clear within milliseconds: short waits, not the outage's back-off.
            return conflicts++ < CONFLICT_RERUNS && err.kind === 'conflict'
              ? { retry: true, retryAfterMs: backoffDelay(conflicts, 5, 200, Math.random) }
              : { retry: false };
          }
          this.markDown(seen, err);
          downSince ??= Date.now();
          return { retry: Date.now() - downSince < this.waitMs };
        },
      },
    );
    this.markUp(seen);
    return result;
  }

  /**
   * One pooled connection for `use`, with every failure of its statements made a DbError (other
   * errors, thrown by a transaction's own function, pass untouched). A connection that failed as
   * unreachable is destroyed, not returned to the pool. With `inTx`, a failure rolls back first.
   */
  private async withClient<T>(use: (sql: Sql) => Promise<T>, inTx = false): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw toDbError(err, this.where);
    }
    // The server may close a connection we hold between statements (a fast shutdown): the next
    // statement fails on its own, and an unheard 'error' event would end the process.
    const onError = () => {};
    client.on('error', onError);
    const sql: Sql = {
      query: async <R extends Row>(text: string, params?: readonly unknown[]) => {
        try {
          const res = await client.query<R>(text, params as unknown[] | undefined);
          return { rows: res.rows, rowCount: res.rowCount ?? 0 };
        } catch (err) {
          throw toDbError(err, this.where);
        }
      },
    };
    let broken: Error | undefined;
    try {
      return await use(sql);
    } catch (err) {
      if (err instanceof DbError && err.kind === 'unreachable') broken = err;
      else if (inTx) await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw err;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  private markDown(seen: number, err: DbError): void {
    if (this.state.state === 'down' || seen !== this.changes) return;
    this.changes++;
    this.state = { state: 'down', since: Date.now(), error: err.message };
    this.log.warn({ code: err.code, where: this.where }, `database unreachable, retrying… (${err.message})`);
  }

  private markUp(seen: number): void {
    if (this.state.state === 'up' || seen !== this.changes) return;
    this.changes++;
    if (this.state.state === 'down') this.log.info({ where: this.where, downMs: Date.now() - this.state.since }, 'database back');
    this.state = { state: 'up', since: Date.now() };
  }
}
