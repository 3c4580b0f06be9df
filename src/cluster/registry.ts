/**
 * The processes serving one bot on one database (docs/cluster.md): each registers at start
 * (`cluster_processes`, migration 070: its id, host, pid, version, when it started) and beats
 * every third of CLUSTER_LEASE_MS; a process is alive while its last heartbeat is within the
 * lease time, by the database's clock (now()), never by comparing the machines' clocks.
 *
 * The heartbeat is also when what the process holds is renewed: leases (leases.ts) and chat
 * claims (claims.ts) register a renewer with `onBeat`, so one timer keeps everything alive and a
 * process that stops beating (killed, frozen, cut off from the database) loses it all within
 * the lease time. A clean stop deletes its row and ends its leases and claims at once, so the
 * others take over without waiting (a rolling restart costs no lease time).
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Logger } from '../core/log.js';
import type { Database, Sql } from '../storage/pg/database.js';

/** A killed process's row is deleted once its last heartbeat is this old (at the next start of any process). */
const FORGET_DEAD_AFTER = '1 day';

export interface ProcessInfo {
  id: string;
  host: string;
  pid: number;
  version: string;
  startedAt: Date;
  /** How long ago its last heartbeat was, by the database's clock (ms). */
  heartbeatAgoMs: number;
  /** Its last heartbeat is within the lease time. */
  alive: boolean;
}

/** A new process id: random, new at every start (a restarted process is another). */
export function newProcessId(): string {
  return randomBytes(6).toString('hex');
}

export interface RegistryOptions {
  /**
   * This process's id (default a new one): the daemon decides it before its stores open, since
   * its session log lines carry it (sessions/pg/log.ts).
   */
  id?: string;
  /** CLUSTER_LEASE_MS. */
  leaseMs: number;
  /** The program's version (package.json), shown by /status and doctor. */
  version: string;
  log: Logger;
  /** Defaults: this machine's name and this process's pid. */
  host?: string;
  pid?: number;
  /** Between heartbeats (default a third of `leaseMs`): tests beat by hand with a long one. */
  beatMs?: number;
}

export class ProcessRegistry {
  /** This process's id in the cluster (newProcessId). */
  readonly id: string;
  readonly leaseMs: number;
  private readonly renewers = new Set<() => Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  /** The heartbeat under way; beats never overlap. */
  private beating: Promise<void> | undefined;
  private stopped = false;

  private constructor(
    private readonly db: Database,
    private readonly opts: RegistryOptions,
  ) {
    this.id = opts.id ?? newProcessId();
    this.leaseMs = opts.leaseMs;
  }

  /** Registers this process and starts its heartbeat. */
  static async start(db: Database, opts: RegistryOptions): Promise<ProcessRegistry> {
    const reg = new ProcessRegistry(db, opts);
    await db.tx(async (sql) => {
      await sql.query(`DELETE FROM cluster_processes WHERE heartbeat_at < now() - interval '${FORGET_DEAD_AFTER}'`);
      await sql.query('INSERT INTO cluster_processes (id, host, pid, version) VALUES ($1, $2, $3, $4)', [
        reg.id,
        opts.host ?? os.hostname(),
        opts.pid ?? process.pid,
        opts.version,
      ]);
    });
    const every = opts.beatMs ?? Math.max(1_000, Math.floor(opts.leaseMs / 3));
    reg.timer = setInterval(() => void reg.beat(), every);
    reg.timer.unref();
    opts.log.info({ process: reg.id, leaseMs: opts.leaseMs }, 'registered in the cluster');
    return reg;
  }

  /** `renew` runs after each heartbeat (a failure is logged, the next beat tries again); the returned function removes it. */
  onBeat(renew: () => Promise<void>): () => void {
    this.renewers.add(renew);
    return () => this.renewers.delete(renew);
  }

  /** One heartbeat and every renewer; one already under way is waited for instead. */
  beat(): Promise<void> {
    this.beating ??= this.beatOnce().finally(() => (this.beating = undefined));
    return this.beating;
  }

  /**
   * Stops beating, deletes this process's row and ends its leases and claims in one transaction:
   * the others take over at once. Called last at shutdown, once nothing of this process runs.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.beating;
    await this.db.tx((sql) => releaseAllOf(sql, this.id));
  }

  private async beatOnce(): Promise<void> {
    if (this.stopped) return;
    try {
      // A row deleted meanwhile (forgotten as dead after a long freeze) is put back.
      await this.db.query(
        `INSERT INTO cluster_processes (id, host, pid, version) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`,
        [this.id, this.opts.host ?? os.hostname(), this.opts.pid ?? process.pid, this.opts.version],
      );
    } catch (err) {
      this.opts.log.warn({ err }, 'cluster heartbeat failed; leases and chats this process holds pass to another once they expire');
    }
    for (const renew of this.renewers) {
      if (this.stopped) return;
      await renew().catch((err: unknown) => this.opts.log.warn({ err }, 'could not renew a lease or claim; tried again at the next heartbeat'));
    }
  }
}

/** Deletes a process's row and ends what it holds: its leases expire now, its chats are free. */
export async function releaseAllOf(sql: Sql, id: string): Promise<void> {
  await sql.query('DELETE FROM cluster_processes WHERE id = $1', [id]);
  await sql.query('UPDATE cluster_leases SET expires_at = now() WHERE holder = $1 AND expires_at > now()', [id]);
  await sql.query('DELETE FROM inbox_claims WHERE owner = $1', [id]);
}

/** The processes registered, newest first, and whether each is alive (a heartbeat within `leaseMs`, by the database's clock). */
export async function listProcesses(sql: Sql, leaseMs: number): Promise<ProcessInfo[]> {
  const { rows } = await sql.query<{ id: string; host: string; pid: number; version: string; started_at: Date; ago_ms: number; alive: boolean }>(
    `SELECT id, host, pid, version, started_at,
            (extract(epoch FROM now() - heartbeat_at) * 1000)::float8 AS ago_ms,
            heartbeat_at > now() - $1 * interval '1 millisecond' AS alive
       FROM cluster_processes ORDER BY started_at DESC, id`,
    [leaseMs],
  );
  return rows.map((r) => ({
    id: r.id,
    host: r.host,
    pid: r.pid,
    version: r.version,
    startedAt: r.started_at,
    heartbeatAgoMs: Math.max(0, Math.round(r.ago_ms)),
    alive: r.alive,
  }));
}
