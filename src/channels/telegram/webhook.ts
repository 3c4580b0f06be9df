/**
 * Webhook mode: an HTTP server on TELEGRAM_WEBHOOK_HOST:PORT (plain HTTP; a TLS reverse proxy
 * in front gives Telegram the https URL it requires) that takes POSTs on the path of
 * TELEGRAM_WEBHOOK_URL.
 *
 * - The secret: every request must carry `X-Telegram-Bot-Api-Secret-Token` equal to the secret
 *   given to setWebhook (compared in constant time); anything else is answered 401 and dropped.
 * - Speed: the update is recorded and queued, then answered 200 at once — the turn runs after.
 *   Telegram re-posts updates it got no timely answer for; answering fast avoids most of that,
 *   and the update log drops the re-posts that still happen.
 * - A failure to record the update answers 500, so Telegram tries again later.
 * - Refused calls are logged at most once a minute, with how many there were: anyone can post
 *   to the port, and one warning per call would let them fill the disk.
 */
import http from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Update } from 'telegraf/types';
import type { Logger } from '../../core/log.js';
import { AppError } from '../../core/errors.js';

const REFUSAL_LOG_INTERVAL_MS = 60_000;

export interface WebhookServerOptions {
  host: string;
  port: number;
  path: string;
  secret: string;
  log: Logger;
  onUpdates: (updates: Update[]) => Promise<void>;
  maxBodyBytes?: number;
}

export class WebhookServer {
  private server: http.Server | undefined;
  private closing = false;
  private refusedSinceLog = 0;
  private refusalLoggedAt = -Infinity;

  constructor(private readonly opts: WebhookServerOptions) {}

  async listen(): Promise<{ host: string; port: number }> {
    const server = http.createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address() as AddressInfo;
    return { host: addr.address, port: addr.port };
  }

  /** Stops taking updates; resolves when open requests are answered. */
  async close(): Promise<void> {
    this.closing = true;
    this.noteRefused(undefined, true);
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'POST' || path !== this.opts.path) return end(res, 404);
    if (!this.secretMatches(req.headers['x-telegram-bot-api-secret-token'])) {
      this.noteRefused(req.socket.remoteAddress);
      req.resume();
      return end(res, 401);
    }
    if (this.closing) return end(res, 503);
    let update: Update;
    try {
      update = JSON.parse(await readBody(req, this.opts.maxBodyBytes ?? 1_000_000)) as Update;
      if (!update || typeof update.update_id !== 'number') throw new AppError('input.invalid', { what: 'webhook body', problem: 'no update_id' });
    } catch (err) {
      this.opts.log.warn({ err }, 'webhook body is not an update; refused');
      return end(res, 400);
    }
    try {
      await this.opts.onUpdates([update]);
      end(res, 200);
    } catch (err) {
      this.opts.log.error({ err, updateId: update.update_id }, 'webhook update could not be recorded; Telegram will retry');
      end(res, 500);
    }
  }

  private noteRefused(remote: string | undefined, force = false): void {
    if (!force) this.refusedSinceLog++;
    const now = Date.now();
    if (this.refusedSinceLog === 0 || (!force && now - this.refusalLoggedAt < REFUSAL_LOG_INTERVAL_MS)) return;
    const n = this.refusedSinceLog;
    this.opts.log.warn(
      { remote, refused: n },
      n === 1 && !force
        ? 'webhook call without the right secret token; refused (further ones are counted and logged at most once a minute)'
        : `${n} webhook call${n === 1 ? '' : 's'} without the right secret token refused since the last warning`,
    );
    this.refusalLoggedAt = now;
    this.refusedSinceLog = 0;
  }

  private secretMatches(header: string | string[] | undefined): boolean {
    if (typeof header !== 'string') return false;
    const a = Buffer.from(header);
    const b = Buffer.from(this.opts.secret);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}

function end(res: http.ServerResponse, status: number): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(status === 200 ? '{"ok":true}' : `{"ok":false,"status":${status}}`);
}

function readBody(req: http.IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        reject(new AppError('input.invalid', { what: 'webhook body', problem: `larger than ${max} bytes` }));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
