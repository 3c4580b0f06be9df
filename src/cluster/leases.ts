/**
 * Named leases (`cluster_leases`, migration 070): one process at a time holds each — Telegram's
 * polling, each nightly job — until it lets go or stops renewing it; then, CLUSTER_LEASE_MS after
 * its last renewal, another may take it.
 *
 * The database decides, on its own clock: a lease is free when its `expires_at` is before the
 * database's now(), and taking one is one statement (INSERT … ON CONFLICT DO UPDATE … WHERE free
 * or mine), so two processes asking at once never both get it. No machine's clock is compared
 * with another's.
 *
 * Locally, a process counts a lease as held only until `leaseMs` after it *sent* the statement
 * that took or renewed it (a monotonic clock, measuring a duration, not a date): the database set
 * the expiry later than that, so the process stops acting on a lease (`holds` false) before any
 * other can take it — even when it is frozen or cut off from the database and cannot hear that
 * it lost it.
 */
import type { Database } from '../storage/pg/database.js';

export interface LeaseInfo {
  name: string;
  holder: string;
  /** Grows at each change of holder (or a take after expiry). */
  token: number;
  takenAt: Date;
  /** Not expired, by the database's clock. */
  live: boolean;
  /** Until it expires (ms, by the database's clock); ≤ 0 when expired. */
  expiresInMs: number;
}

export interface TakeOptions {
  /**
   * Not taken when it was last taken (by anyone) within this many ms: a nightly job fired by
   * every process's cron at about the same time runs once (jobs-gate in gate.ts).
   */
  notTakenWithinMs?: number;
}

export class Leases {
  /** Per lease held, until when (this process's monotonic clock) it counts as held. */
  private readonly until = new Map<string, number>();

  constructor(
    private readonly db: Database,
    /** The holder's name: the process's id (registry.ts). */
    readonly owner: string,
    readonly leaseMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Takes the lease when it is free (or renews it when this process holds it). True when held. */
  async take(name: string, opts: TakeOptions = {}): Promise<boolean> {
    const sent = this.clock();
    const { rows } = await this.db.query(
      `INSERT INTO cluster_leases AS l (name, holder, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
       ON CONFLICT (name) DO UPDATE SET
         holder = excluded.holder,
         expires_at = excluded.expires_at,
         token = l.token + (l.expires_at <= now())::int,
         taken_at = CASE WHEN l.expires_at <= now() THEN now() ELSE l.taken_at END
       WHERE (l.holder = excluded.holder AND l.expires_at > now())
          OR (l.expires_at <= now() AND ($4::float8 IS NULL OR l.taken_at <= now() - $4 * interval '1 millisecond'))
       RETURNING token`,
      [name, this.owner, this.leaseMs, opts.notTakenWithinMs ?? null],
    );
    return this.noted(name, rows.length > 0, sent);
  }

  /**
   * Extends a lease this process holds and has not let go. False when it expired meanwhile
   * (another may have taken it; `take` asks again) or was released.
   */
  async renew(name: string): Promise<boolean> {
    if (!this.until.has(name)) return false;
    const sent = this.clock();
    const { rowCount } = await this.db.query(
      `UPDATE cluster_leases SET expires_at = now() + $3 * interval '1 millisecond'
        WHERE name = $1 AND holder = $2 AND expires_at > now()`,
      [name, this.owner, this.leaseMs],
    );
    // Released while the renewal was on its way: it stays let go.
    if (!this.until.has(name)) return false;
    return this.noted(name, rowCount > 0, sent);
  }

  /** Renews every lease this process holds (the registry's heartbeat); returns the names it lost. */
  async renewAll(): Promise<string[]> {
    const lost: string[] = [];
    for (const name of [...this.until.keys()]) if (this.until.has(name) && !(await this.renew(name))) lost.push(name);
    return lost;
  }

  /** Lets go: it stops counting as held here first, then ends in the database (others may take it at once). */
  async release(name: string): Promise<void> {
    if (!this.until.delete(name)) return;
    await this.db.query('UPDATE cluster_leases SET expires_at = now() WHERE name = $1 AND holder = $2 AND expires_at > now()', [name, this.owner]);
  }

  /** Held now, as far as this process can be sure (see the file's comment). */
  holds(name: string): boolean {
    const until = this.until.get(name);
    return until !== undefined && this.clock() < until;
  }

  private noted(name: string, held: boolean, sent: number): boolean {
    if (held) this.until.set(name, sent + this.leaseMs);
    else this.until.delete(name);
    return held;
  }
}

/** Every lease there is, by name: who holds it, until when (for /status and doctor). */
export async function listLeases(db: Pick<Database, 'query'>): Promise<LeaseInfo[]> {
  const { rows } = await db.query<{ name: string; holder: string; token: string; taken_at: Date; live: boolean; left_ms: number }>(
    `SELECT name, holder, token, taken_at, expires_at > now() AS live,
            (extract(epoch FROM expires_at - now()) * 1000)::float8 AS left_ms
       FROM cluster_leases ORDER BY name`,
  );
  return rows.map((r) => ({ name: r.name, holder: r.holder, token: Number(r.token), takenAt: r.taken_at, live: r.live, expiresInMs: Math.round(r.left_ms) }));
}
