/**
 * The nightly upkeep on node-cron, in the configured time zone. A job never overlaps itself
 * (node-cron's noOverlap, plus our own guard, which also covers a CLI run racing the cron), and
 * every run is logged by Upkeep.run. Several processes on one database run each scheduled job
 * once: the cron asks the `gate` (a lease, src/cluster/gates.ts); without one it always runs.
 */
import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../core/log.js';
import type { JobName, JobResult, Upkeep } from '../index/upkeep/upkeep.js';
import { errorMessage } from '../core/errors.js';

const DAY_MS = 24 * 3600_000;

/** `periodMs`: the time between two runs, for the gate (a run within half of it is the same night's). */
export const SCHEDULE: Array<{ job: JobName; cron: string; periodMs: number }> = [
  { job: 'enrichment', cron: '0 2 * * *', periodMs: DAY_MS },
  { job: 'consolidation', cron: '0 3 * * *', periodMs: DAY_MS },
  { job: 'decay', cron: '0 4 * * *', periodMs: DAY_MS },
  { job: 'reflection', cron: '0 3 * * 0', periodMs: 7 * DAY_MS },
];

/**
 * Whether this process runs a scheduled job: `begin` gives the function that ends the run (it
 * lets the others know), or null when another process runs it (or ran it this period).
 */
export interface JobGate {
  begin(job: JobName, periodMs: number): Promise<(() => Promise<void>) | null>;
}

export class Scheduler {
  private tasks: ScheduledTask[] = [];
  private readonly running = new Set<JobName>();

  constructor(
    private readonly upkeep: Upkeep,
    private readonly timezone: string,
    private readonly log: Logger,
    private readonly gate?: JobGate,
  ) {}

  /** Runs a job now unless it is already running. */
  async runNow(job: JobName): Promise<JobResult | null> {
    if (this.running.has(job)) {
      this.log.info({ job }, `${job} is still running; this run is skipped`);
      return null;
    }
    this.running.add(job);
    try {
      return await this.upkeep.run(job);
    } finally {
      this.running.delete(job);
    }
  }

  /** What the cron runs: the job, unless another process runs it (the gate). */
  async runScheduled(job: JobName): Promise<JobResult | null> {
    const period = SCHEDULE.find((s) => s.job === job)?.periodMs ?? DAY_MS;
    const end = this.gate ? await this.gate.begin(job, period) : async () => undefined;
    if (!end) {
      this.log.info({ job }, `${job} runs in another process this time; skipped here`);
      return null;
    }
    try {
      return await this.runNow(job);
    } finally {
      await end().catch((err: unknown) => this.log.warn({ job, err: errorMessage(err) }, 'could not let the other processes know a job ended'));
    }
  }

  start(): void {
    for (const s of SCHEDULE) {
      this.tasks.push(
        cron.schedule(
          s.cron,
          () => void this.runScheduled(s.job).catch((err: unknown) => this.log.error({ job: s.job, err: errorMessage(err) }, 'job failed')),
          {
            timezone: this.timezone,
            noOverlap: true,
            name: `upkeep-${s.job}`,
          },
        ),
      );
    }
    this.log.info({ timezone: this.timezone, jobs: SCHEDULE.map((s) => `${s.job} ${s.cron}`) }, 'nightly jobs scheduled');
  }

  async stop(): Promise<void> {
    for (const t of this.tasks) await t.stop();
    this.tasks = [];
  }
}
