/**
 * Rows a process of the cluster owns (docs/cluster.md): a store that several processes write
 * names each row's process and lets another take a row over only once that process is no
 * longer alive — its last heartbeat in `cluster_processes` (migrations/pg/070_cluster.sql) is
 * older than the lease, by the database's clock. The cluster's registry (src/cluster/) beats;
 * the stores only read, through this one condition.
 */

/** The process writing: its id in `cluster_processes` (a random one outside a cluster) and CLUSTER_LEASE_MS. */
export interface ProcessOwner {
  id: string;
  leaseMs: number;
}

/**
 * SQL, true while the process `owner` (an SQL expression) is alive; `leaseMs` is the SQL
 * parameter holding the lease in milliseconds (e.g. `$3`). An id no process registered (a CLI's,
 * one from before the cluster) is not alive.
 */
export function ownerAlive(owner: string, leaseMs: string): string {
  return `EXISTS (SELECT 1 FROM cluster_processes p WHERE p.id = ${owner} AND p.heartbeat_at > now() - ${leaseMs} * interval '1 millisecond')`;
}
