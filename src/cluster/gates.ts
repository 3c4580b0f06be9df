/**
 * The leases the daemon's parts ask before acting, so that in a cluster one process does what
 * must be done once (docs/cluster.md):
 *
 * - Telegram's polling (`pollGate`): Telegram answers 409 Conflict to a second poller of one bot,
 *   so one process at a time holds the lease `channel-polling` and polls; the others wait, asking
 *   again every third of the lease time, and the first to ask after the holder stops renewing
 *   (it died) polls next — within the lease time. The poller asks before each getUpdates
 *   (polling.ts `gate`).
 * - Each nightly job (`jobGate`): the lease `job:<name>`, taken only when nobody took it within
 *   half the job's period, held (renewed by the heartbeat) while it runs, let go after. Every
 *   process's cron fires; one runs the job. A job whose process died while it ran is not run
 *   again before its next time (as a killed single process does not run it again either).
 *
 * Without a database neither exists: the poller polls and the scheduler runs, as always.
 */
import { sleep } from '../core/retry.js';
import type { Logger } from '../core/log.js';
import type { Leases } from './leases.js';

/** The lease of Telegram's polling. */
export const POLLING_LEASE = 'channel-polling';

/** What the poller awaits before each getUpdates (polling.ts): resolves once this process may poll; rejects when `signal` aborts. */
export type PollGate = (signal: AbortSignal) => Promise<void>;

export function pollGate(leases: Leases, log: Logger, name = POLLING_LEASE): PollGate {
  const every = Math.max(200, Math.floor(leases.leaseMs / 3));
  let waiting = false;
  return async (signal) => {
    while (!leases.holds(name)) {
      const taken = await leases.take(name).catch((err: unknown) => {
        log.warn({ err }, 'could not ask for the polling lease; asking again');
        return false;
      });
      if (taken) {
        log.info({ lease: name, process: leases.owner }, 'this process polls Telegram now (it holds the polling lease)');
        waiting = false;
        return;
      }
      if (!waiting) log.info({ lease: name }, 'another process polls Telegram; this one takes over if it stops');
      waiting = true;
      await sleep(every, signal);
    }
  };
}

/** The scheduler's gate (jobs.ts) on leases: a job runs in the one process that takes its lease. */
/** A gate around the nightly jobs (app/jobs.ts JobGate, which names its jobs; any name here). */
export interface LeaseJobGate {
  begin(job: string, periodMs: number): Promise<(() => Promise<void>) | null>;
}

export function jobGate(leases: Leases): LeaseJobGate {
  return {
    async begin(job, periodMs) {
      const name = `job:${job}`;
      if (!(await leases.take(name, { notTakenWithinMs: periodMs / 2 }))) return null;
      return () => leases.release(name);
    },
  };
}
