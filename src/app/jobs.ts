/**
 * The nightly upkeep on node-cron, in the configured time zone. A job never overlaps itself
 * (node-cron's noOverlap, plus our own guard, which also covers a CLI run racing the cron), and
 * every run is logged by Upkeep.run.
 */
import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../core/log.js';
import type { JobName, JobResult, Upkeep } from '../index/upkeep/upkeep.js';
import { errorMessage } from '../core/errors.js';

export const SCHEDULE: Array<{ job: JobName; cron: string }> = [
  { job: 'enrichment', cron: '0 2 * * *' },
  { job: 'consolidation', cron: '0 3 * * *' },
  { job: 'decay', cron: '0 4 * * *' },
  { job: 'reflection', cron: '0 3 * * 0' },
];

export class Scheduler {
  private tasks: ScheduledTask[] = [];
  private readonly running = new Set<JobName>();

  constructor(
    private readonly upkeep: Upkeep,
    private readonly timezone: string,
    private readonly log: Logger,
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

  start(): void {
    for (const s of SCHEDULE) {
      this.tasks.push(
        cron.schedule(s.cron, () => void this.runNow(s.job).catch((err: unknown) => this.log.error({ job: s.job, err: errorMessage(err) }, 'job failed')), {
          timezone: this.timezone,
          noOverlap: true,
          name: `upkeep-${s.job}`,
        }),
      );
    }
    this.log.info({ timezone: this.timezone, jobs: SCHEDULE.map((s) => `${s.job} ${s.cron}`) }, 'nightly jobs scheduled');
  }

  async stop(): Promise<void> {
    for (const t of this.tasks) await t.stop();
    this.tasks = [];
  }
}
