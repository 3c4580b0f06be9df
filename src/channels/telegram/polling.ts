/**
 * Long polling with a watchdog. One loop calls getUpdates (timeout `pollTimeoutSec`), hands
 * each batch to `onUpdates` — which records the ids and queues the messages before it
 * resolves — and only then asks for the next batch with offset = last id + 1, which tells
 * Telegram the batch is done.
 *
 * A long poll must come back within its timeout. The watchdog checks that: a poll in flight
 * for longer than `stallAfterMs` (a half-open connection, a proxy that swallowed the answer)
 * or a loop that ended on its own means polling silently stopped. If Telegram answers a
 * getMe, the stuck poll is aborted and a fresh loop started; if not, the network is down and
 * the loop's own backoff is left to deal with it.
 *
 * Errors: 429 waits retry_after, transient failures back off (capped, jittered; the shared
 * retry helper), 401 stops polling (the token is wrong; nothing will change by retrying).
 *
 * Several processes of one bot (docs/cluster.md): Telegram answers 409 Conflict to a second
 * poller, so each getUpdates first waits for the `gate` — the polling lease (cluster/gates.ts):
 * one process polls, the others wait to take over. Without a gate (one process) it always polls.
 */
import type { Telegram } from 'telegraf';
import type { Update } from 'telegraf/types';
import type { Logger } from '../../core/log.js';
import { withDefaults } from '../../core/defaults.js';
import { sleep, withRetry } from '../../core/retry.js';
import { classifyTelegramFailure, describeError, isAbort, isTelegramError } from './errors.js';

/** Pace and patience; production defaults in POLL_DEFAULTS, tests make them short. */
export interface PollTuning {
  pollTimeoutSec: number;
  /** Pause after an empty answer that came back early (servers that do not hold the poll). */
  emptyPollDelayMs: number;
  watchdogIntervalMs: number;
  /** A poll in flight longer than this has stalled (undefined: poll timeout + 30 s). */
  stallAfterMs: number | undefined;
  allowedUpdates: string[];
  /** Backoff for failing polls. */
  baseDelayMs: number;
  maxDelayMs: number;
}

/** Messages, the bot's own membership changes (added to a group: group-gate.ts) and its buttons pressed (/why). */
export const ALLOWED_UPDATES = ['message', 'my_chat_member', 'callback_query'];

export const POLL_DEFAULTS: PollTuning = {
  pollTimeoutSec: 30,
  emptyPollDelayMs: 250,
  watchdogIntervalMs: 10_000,
  stallAfterMs: undefined,
  allowedUpdates: ALLOWED_UPDATES,
  baseDelayMs: 1000,
  maxDelayMs: 30_000,
};

export interface PollerOptions {
  telegram: Telegram;
  log: Logger;
  onUpdates: (updates: Update[]) => Promise<void>;
  /** Called once when polling gives up for good (a refused token). */
  onFatal?: ((err: unknown) => void) | undefined;
  /** Fields left out (or undefined) keep POLL_DEFAULTS. */
  tuning?: Partial<PollTuning> | undefined;
  /** Resolves when this process may poll (it holds the polling lease); rejects when the signal aborts. Unset: always. */
  gate?: ((signal: AbortSignal) => Promise<void>) | undefined;
}

export class Poller {
  private readonly tg: Telegram;
  private readonly log: Logger;
  private offset: number | undefined;
  private generation = 0;
  private stopped = true;
  private current: AbortController | undefined;
  private inFlightSince: number | undefined;
  private loopDone: Promise<void> = Promise.resolve();
  private loopRunning = false;
  private watchdog: NodeJS.Timeout | undefined;
  private checking = false;
  /** How many times the watchdog restarted polling (for logs and tests). */
  restarts = 0;

  private readonly tuning: PollTuning;

  constructor(private readonly opts: PollerOptions) {
    this.tg = opts.telegram;
    this.log = opts.log;
    this.tuning = withDefaults(POLL_DEFAULTS, opts.tuning);
  }

  start(): void {
    this.stopped = false;
    this.startLoop();
    const every = this.tuning.watchdogIntervalMs;
    this.watchdog = setInterval(() => void this.check(), every);
    this.watchdog.unref();
  }

  /** Stops asking for updates: the poll in flight is aborted; resolves when the loop has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.watchdog) clearInterval(this.watchdog);
    this.current?.abort();
    await this.loopDone;
  }

  private startLoop(): void {
    const gen = ++this.generation;
    this.loopRunning = true;
    this.loopDone = this.loop(gen)
      .catch((err: unknown) => this.log.error({ err }, 'polling loop failed'))
      .finally(() => {
        if (gen === this.generation) this.loopRunning = false;
      });
  }

  private async loop(gen: number): Promise<void> {
    const timeout = this.tuning.pollTimeoutSec;
    while (!this.stopped && gen === this.generation) {
      const ac = new AbortController();
      this.current = ac;
      if (this.opts.gate) {
        try {
          await this.opts.gate(ac.signal);
        } catch {
          // Aborted: stopped, or restarted by the watchdog.
          return;
        }
        if (this.stopped || gen !== this.generation) return;
      }
      const started = Date.now();
      let updates: Update[];
      try {
        updates = await withRetry(
          () => {
            this.inFlightSince = Date.now();
            return this.tg.callApi(
              'getUpdates',
              { timeout, limit: 100, allowed_updates: this.tuning.allowedUpdates as never, ...(this.offset !== undefined ? { offset: this.offset } : {}) },
              { signal: ac.signal as never },
            );
          },
          {
            retries: Number.POSITIVE_INFINITY,
            baseDelayMs: this.tuning.baseDelayMs,
            maxDelayMs: this.tuning.maxDelayMs,
            // Polling has nothing better to do than wait as long as Telegram asks.
            maxRetryAfterMs: Number.POSITIVE_INFINITY,
            // A 401 is final; everything else (network, 5xx, 409 while another poller fades) is waited out.
            classify: (err) =>
              isTelegramError(err) && (err.code === 401 || err.code === 404) ? { retry: false } : { ...classifyTelegramFailure(err, true), retry: true },
            onRetry: ({ attempt, delayMs, err }) => {
              this.inFlightSince = undefined;
              const level = attempt === 1 || attempt % 10 === 0 ? 'warn' : 'debug';
              this.log[level]({ attempt, delayMs, err: describeError(err) }, 'getUpdates failed; retrying');
            },
            signal: ac.signal,
          },
        );
      } catch (err) {
        this.inFlightSince = undefined;
        if (this.stopped || gen !== this.generation || isAbort(err) || ac.signal.aborted) return;
        this.log.error({ err: describeError(err) }, 'getUpdates refused for good (check TELEGRAM_BOT_TOKEN); polling stopped');
        this.stopped = true;
        this.opts.onFatal?.(err);
        return;
      }
      this.inFlightSince = undefined;
      if (gen !== this.generation) return;
      if (updates.length > 0) {
        // The batch is on disk and queued before the next poll confirms it to Telegram.
        await this.opts.onUpdates(updates);
        this.offset = Math.max(...updates.map((u) => u.update_id)) + 1;
        continue;
      }
      if (this.stopped) return;
      const elapsed = Date.now() - started;
      const minGap = this.tuning.emptyPollDelayMs;
      if (elapsed < minGap) await sleep(minGap - elapsed, ac.signal).catch(() => undefined);
    }
  }

  /** The watchdog: restart polling that has stalled or ended while it should be running. */
  private async check(): Promise<void> {
    if (this.stopped || this.checking) return;
    const stallAfter = this.tuning.stallAfterMs ?? (this.tuning.pollTimeoutSec + 30) * 1000;
    const stalledFor = this.inFlightSince === undefined ? 0 : Date.now() - this.inFlightSince;
    const stalled = stalledFor > stallAfter;
    if (!stalled && this.loopRunning) return;
    this.checking = true;
    try {
      const ac = new AbortController();
      const t = setTimeout(() => ac.abort(), 10_000);
      try {
        await this.tg.callApi('getMe', {} as never, { signal: ac.signal as never });
      } finally {
        clearTimeout(t);
      }
    } catch (err) {
      this.log.warn({ stalledForMs: stalledFor, err: describeError(err) }, 'polling looks stalled and Telegram does not answer getMe; waiting');
      return;
    } finally {
      this.checking = false;
    }
    if (this.stopped) return;
    this.restarts++;
    this.log.warn(
      { stalledForMs: stalledFor, loopRunning: this.loopRunning, restarts: this.restarts },
      'polling stopped returning while Telegram answers; restarting it',
    );
    this.current?.abort();
    this.inFlightSince = undefined;
    this.startLoop();
  }
}
