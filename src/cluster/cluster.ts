/**
 * One process's part in a cluster (docs/cluster.md), opened in one call for the daemon's wiring:
 * its registration and heartbeat (registry.ts), its leases (leases.ts) and chat claims
 * (claims.ts), both renewed at every heartbeat, the gates the poller and the scheduler ask
 * (gates.ts), and what /status full shows (status.ts). `/stop` across processes (stops.ts) needs
 * the dispatcher's ChatStops and is opened beside it.
 *
 * Only with DATABASE_URL: without it there is one process and none of this exists.
 */
import type { Logger } from '../core/log.js';
import type { Database } from '../storage/pg/database.js';
import { ChatClaims, type Chat } from './claims.js';
import { jobGate, pollGate, type LeaseJobGate, type PollGate } from './gates.js';
import { Leases } from './leases.js';
import { ProcessRegistry } from './registry.js';
import { clusterLines, clusterReport } from './status.js';

export interface ClusterOptions {
  /** This process's id (default a new one: registry.ts newProcessId). */
  id?: string;
  /** CLUSTER_LEASE_MS. */
  leaseMs: number;
  version: string;
  log: Logger;
  /**
   * Chats another process took from this one (it could not renew them within the lease time):
   * what runs or waits here for them is handed over — the other process runs them again.
   */
  onChatsLost?: (chats: Chat[]) => void;
  /** Between heartbeats (default a third of the lease time). */
  beatMs?: number;
  /** Only this channel's chats are claimed here (the channel the process serves: its replies go out through it). */
  channel?: string;
}

export interface ClusterMember {
  readonly id: string;
  readonly registry: ProcessRegistry;
  readonly leases: Leases;
  readonly claims: ChatClaims;
  /** For TelegramChannel's `pollGate`. */
  readonly pollGate: PollGate;
  /** For the Scheduler. */
  readonly jobGate: LeaseJobGate;
  /** For /status full (StatusDeps.clusterLines). */
  statusLines(): Promise<string[]>;
  /** Leaves the cluster: its leases and chats are free at once. Last at shutdown, once nothing of it runs. */
  stop(): Promise<void>;
}

export async function joinCluster(db: Database, opts: ClusterOptions): Promise<ClusterMember> {
  const registry = await ProcessRegistry.start(db, opts);
  const leases = new Leases(db, registry.id, opts.leaseMs);
  const claims = new ChatClaims(db, registry.id, opts.leaseMs, undefined, opts.channel);
  registry.onBeat(async () => {
    const lost = await leases.renewAll();
    if (lost.length > 0) opts.log.warn({ leases: lost }, 'leases this process held were not renewed in time; another process may hold them now');
  });
  registry.onBeat(async () => {
    const lost = await claims.renew();
    if (lost.length === 0) return;
    opts.log.warn(
      { chats: lost.length },
      'chats this process ran were taken by another process (it could not renew them in time); what runs of them here is handed over',
    );
    opts.onChatsLost?.(lost);
  });
  return {
    id: registry.id,
    registry,
    leases,
    claims,
    pollGate: pollGate(leases, opts.log),
    jobGate: jobGate(leases),
    statusLines: async () => clusterLines(await clusterReport(db, opts.leaseMs), registry.id),
    stop: () => registry.stop(),
  };
}
