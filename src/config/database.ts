/**
 * DATABASE_URL and DATABASE_POOL_SIZE: where the durable state lives when it is not in files
 * (docs/postgres.md). Unset, the daemon keeps everything in WORKSPACE_DIR as before.
 */
import { databaseUrlProblem } from '../storage/pg/url.js';
import type { SettingsReader } from './reader.js';

export interface DatabaseConfig {
  /** A postgres:// URL; undefined = embedded mode (files and SQLite). Its password is a log secret. */
  url: string | undefined;
  /** Connections the pool opens at most. */
  poolSize: number;
  /** CLUSTER_LEASE_MS: how long a lease or a chat's claim outlives its holder's last renewal (src/cluster/, docs/cluster.md). */
  leaseMs: number;
}

/** CLUSTER_LEASE_MS unset. */
export const DEFAULT_LEASE_MS = 15_000;

export function readDatabase(r: SettingsReader): DatabaseConfig {
  const url = r.str('DATABASE_URL');
  // The value holds a password: the problem line names the setting, never prints it.
  const problem = url === undefined ? null : databaseUrlProblem(url);
  if (problem) r.problem(problem);
  return {
    url: problem ? undefined : url,
    poolSize: r.int('DATABASE_POOL_SIZE', 10, 1, 1000),
    leaseMs: r.int('CLUSTER_LEASE_MS', DEFAULT_LEASE_MS, 3_000, 300_000),
  };
}
