/**
 * Maps what node-postgres throws onto our codes, keeping "couldn't reach the database" (refused,
 * reset, the server shutting down or starting up: worth waiting out) apart from "the database
 * said no" (a syntax error, a broken constraint: the same statement would fail again), and
 * the conflicts between transactions (serialization failure, deadlock) that a rerun resolves.
 */
import pg from 'pg';
import { AppError } from '../../core/errors.js';

/** unreachable: not reached, or the connection was lost; conflict: a rerun of the transaction may pass; rejected: it would not. */
export type DbFailureKind = 'unreachable' | 'conflict' | 'rejected';

export class DbError extends AppError<'database.unreachable' | 'database.rejected'> {
  readonly kind: DbFailureKind;
  /** PostgreSQL's SQLSTATE when the server answered (`23505`: a unique key taken); undefined for a lost connection. */
  readonly sqlState: string | undefined;
  constructor(kind: DbFailureKind, where: string, detail: string, sqlState: string | undefined, cause: unknown) {
    if (kind === 'unreachable') super('database.unreachable', { where, detail }, { cause });
    else super('database.rejected', { where, detail: sqlState ? `${detail} (SQLSTATE ${sqlState})` : detail }, { cause });
    this.name = 'DbError';
    this.kind = kind;
    this.sqlState = sqlState;
  }
}

/**
 * The server's answers that mean "not now" rather than "no": class 08 (connection exception),
 * 53300 (too many connections), 57P01 (admin shutdown: `pg_ctl stop -m fast`, a restart), 57P02
 * (crash shutdown), 57P03 (cannot connect now: starting up, shutting down, recovering), 57P05
 * (idle session timeout). A statement cut off by one of them did not commit.
 */
const NOT_NOW = /^(?:08\w{3}|53300|57P0[1235])$/;

/** Rerunning the whole transaction is the documented answer to these (serialization failure, deadlock). */
const CONFLICT = new Set(['40001', '40P01']);

/** Socket errors of a connection that could not be made or was lost (the ERR_ ones: Node's, for a write to a closed socket). */
const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ENOENT',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
  'ERR_SOCKET_CLOSED',
]);

/** node-postgres's own words for a connection that is gone or never came (no code of their own). */
const CLIENT_LOST = /Connection terminated|not queryable|timeout expired|timeout exceeded when trying to connect/i;

/** What kind of failure `err` (thrown by node-postgres) is. */
export function dbFailureKind(err: unknown): DbFailureKind {
  if (err instanceof DbError) return err.kind;
  const code = (err as { code?: unknown } | null)?.code;
  if (err instanceof pg.DatabaseError) {
    if (typeof code === 'string' && NOT_NOW.test(code)) return 'unreachable';
    if (typeof code === 'string' && CONFLICT.has(code)) return 'conflict';
    return 'rejected';
  }
  if (typeof code === 'string' && NETWORK.has(code)) return 'unreachable';
  if (err instanceof AggregateError && err.errors.some((e) => dbFailureKind(e) === 'unreachable')) return 'unreachable';
  if (err instanceof Error && CLIENT_LOST.test(err.message)) return 'unreachable';
  // Anything else node-postgres throws (a bad parameter, a protocol surprise) is not the network's fault.
  return 'rejected';
}

/** `err` as a DbError of its kind, the original kept as `cause` for the log (`where` is the database's description, never its URL). */
export function toDbError(err: unknown, where: string): DbError {
  if (err instanceof DbError) return err;
  const kind = dbFailureKind(err);
  const sqlState = err instanceof pg.DatabaseError ? err.code : undefined;
  return new DbError(kind, where, describe(err), sqlState, err);
}

function describe(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return describe(err.errors[0]);
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const text = err.message || String(code ?? err.name);
    return typeof code === 'string' && !(err instanceof pg.DatabaseError) && !text.includes(code) ? `${code}: ${text}` : text;
  }
  return String(err);
}
