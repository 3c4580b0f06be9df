/**
 * What /status full and doctor show of a cluster (docs/cluster.md): the processes registered —
 * alive or not, by their heartbeat and the database's clock — how many chats each holds, and
 * who holds which lease.
 */
import { formatDuration } from '../features/status/status.js';
import type { Database } from '../storage/pg/database.js';
import { claimsByOwner } from './claims.js';
import { listLeases, type LeaseInfo } from './leases.js';
import { listProcesses, type ProcessInfo } from './registry.js';

export interface ClusterReport {
  processes: Array<ProcessInfo & { chats: number }>;
  leases: LeaseInfo[];
}

/** Read in one transaction (one snapshot, one clock reading for every row). */
export async function clusterReport(db: Database, leaseMs: number): Promise<ClusterReport> {
  return db.tx(async (sql) => {
    const processes = await listProcesses(sql, leaseMs);
    const chats = await claimsByOwner(sql);
    const leases = await listLeases(sql);
    return { processes: processes.map((p) => ({ ...p, chats: chats.get(p.id) ?? 0 })), leases };
  });
}

/** The report in lines a person reads; `self`: this process's id, marked "this one". */
export function clusterLines(report: ClusterReport, self?: string): string[] {
  const alive = report.processes.filter((p) => p.alive);
  const name = (id: string) => {
    const p = report.processes.find((x) => x.id === id);
    return p ? `${id} (${p.host}:${p.pid}${id === self ? ', this one' : ''})` : `${id} (gone)`;
  };
  const lines = [
    `Processes: ${alive.length} alive${report.processes.length > alive.length ? `, ${report.processes.length - alive.length} not answering` : ''}`,
  ];
  for (const p of report.processes) {
    const beat = p.alive ? `heartbeat ${formatDuration(p.heartbeatAgoMs)} ago` : `silent for ${formatDuration(p.heartbeatAgoMs)}`;
    lines.push(`  ${name(p.id)} v${p.version}, up ${formatDuration(Date.now() - p.startedAt.getTime())}, ${beat}, ${p.chats} chat${p.chats === 1 ? '' : 's'}`);
  }
  const held = report.leases.filter((l) => l.live);
  lines.push(held.length === 0 ? 'Leases: none held' : 'Leases:');
  for (const l of held) lines.push(`  ${l.name}: ${name(l.holder)}, ${formatDuration(l.expiresInMs)} left`);
  return lines;
}

/** A row of doctor's (cli/doctor.ts CheckResult). */
export interface ClusterCheck {
  name: string;
  status: 'ok' | 'warn';
  detail: string;
  fix?: string;
}

/** Doctor's row: the processes alive (their versions: a rolling update left half done is a warning) and the leases held. */
export function clusterCheck(report: ClusterReport): ClusterCheck {
  const alive = report.processes.filter((p) => p.alive);
  const held = report.leases.filter((l) => l.live).map((l) => `${l.name} by ${l.holder}`);
  const detail = `${alive.length} process${alive.length === 1 ? '' : 'es'} alive (${alive.map((p) => `${p.id} ${p.host}:${p.pid} v${p.version}`).join(', ') || 'none'}); leases: ${held.join(', ') || 'none held'}`;
  const versions = new Set(alive.map((p) => p.version));
  if (versions.size > 1)
    return {
      name: 'cluster',
      status: 'warn',
      detail,
      fix: `processes of ${versions.size} versions run together (${[...versions].join(', ')}): finish the rolling update`,
    };
  return { name: 'cluster', status: 'ok', detail };
}
