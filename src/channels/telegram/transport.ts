/**
 * How updates reach the channel: long polling with a watchdog (polling.ts, the default) or a
 * webhook (webhook.ts) when TELEGRAM_WEBHOOK_URL is set. Both are one `Transport` with
 * `start`/`stop`, chosen once here, so the channel never asks which one it runs.
 */
import { randomBytes } from 'node:crypto';
import type { Telegram } from 'telegraf';
import type { Update } from 'telegraf/types';
import type { TelegramConfig } from './settings.js';
import type { Logger } from '../../core/log.js';
import { describeError } from './errors.js';
import { ALLOWED_UPDATES, Poller, type PollerOptions, type PollTuning } from './polling.js';
import { startupCall } from './startup.js';
import { WebhookServer } from './webhook.js';

export interface Transport {
  /** Starts taking updates (`bot`: the @name for the start-up log line). */
  start(bot: string): Promise<void>;
  /** Stops taking updates: the poll in flight is aborted, or the webhook server closed. */
  stop(): Promise<void>;
  /** How often the watchdog restarted polling (always 0 for a webhook). */
  readonly restarts: number;
}

export interface TransportOptions {
  telegram: Telegram;
  config: TelegramConfig;
  log: Logger;
  onUpdates: (updates: Update[]) => Promise<void>;
  /** Polling gave up for good (Telegram refused the token while running). */
  onFatal?: ((err: unknown) => void) | undefined;
  /** Polling pace; `baseDelayMs` is also the backoff of start-up calls. */
  tuning?: Partial<PollTuning> | undefined;
  /** Polling waits for it before each getUpdates (the polling lease of a cluster); a webhook needs none. */
  pollGate?: PollerOptions['gate'];
}

export function createTransport(opts: TransportOptions): Transport {
  return opts.config.webhookUrl ? webhookTransport(opts, opts.config.webhookUrl) : pollingTransport(opts);
}

function webhookTransport(opts: TransportOptions, url: string): Transport {
  const cfg = opts.config;
  const secret = cfg.webhookSecret ?? randomBytes(24).toString('hex');
  const server = new WebhookServer({
    host: cfg.webhookHost,
    port: cfg.webhookPort,
    path: new URL(url).pathname || '/',
    secret,
    log: opts.log,
    onUpdates: opts.onUpdates,
  });
  return {
    restarts: 0,
    async start(bot) {
      const bound = await server.listen();
      await startupCall(
        'setWebhook',
        () => opts.telegram.setWebhook(url, { secret_token: secret, allowed_updates: ALLOWED_UPDATES as never, max_connections: 1 }),
        opts.tuning?.baseDelayMs,
      );
      opts.log.info({ bot, url, listen: `${bound.host}:${bound.port}` }, 'Telegram channel started (webhook)');
    },
    stop: () => server.close(),
  };
}

function pollingTransport(opts: TransportOptions): Transport {
  const poller = new Poller({
    telegram: opts.telegram,
    log: opts.log,
    onUpdates: opts.onUpdates,
    onFatal: opts.onFatal,
    tuning: opts.tuning,
    gate: opts.pollGate,
  });
  return {
    get restarts() {
      return poller.restarts;
    },
    async start(bot) {
      // A webhook left from an earlier run would make every getUpdates fail with 409.
      await opts.telegram.deleteWebhook({ drop_pending_updates: false }).catch((err: unknown) => {
        opts.log.warn({ err: describeError(err) }, 'deleteWebhook failed; polling may see 409 until the webhook is removed');
      });
      poller.start();
      opts.log.info({ bot }, 'Telegram channel started (long polling)');
    },
    stop: () => poller.stop(),
  };
}
