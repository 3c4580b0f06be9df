/**
 * The calls a channel makes once, at start: who the bot is (getMe, which must succeed) and its
 * command menu (setMyCommands, cosmetic). Transient failures of a required call are retried a
 * few times and then become a stable error (errors.ts), so the daemon says why it cannot start.
 */
import type { Telegraf } from 'telegraf';
import type { Logger } from '../../core/log.js';
import { withRetry } from '../../core/retry.js';
import { classifyTelegramFailure, describeError, toTelegramAppError } from './errors.js';
import type { BotIdentity } from './inbound.js';

/** A start-up call: transient failures retried a few times, then a stable error. */
export async function startupCall<T>(what: string, fn: () => Promise<T>, baseDelayMs = 1000): Promise<T> {
  try {
    return await withRetry(fn, { retries: 3, baseDelayMs, maxDelayMs: 5000, classify: (err) => classifyTelegramFailure(err, true) });
  } catch (err) {
    throw toTelegramAppError(err, what);
  }
}

/** The bot's own account, also given to telegraf (it reads `botInfo`). */
export async function identify(bot: Telegraf, baseDelayMs?: number): Promise<BotIdentity> {
  const me = await startupCall('getMe', () => bot.telegram.getMe(), baseDelayMs);
  bot.botInfo = me;
  return { id: me.id, username: me.username };
}

/** The command menu, with /start first; setMyCommands is cosmetic: a failure is logged and ignored. */
export async function registerCommands(bot: Telegraf, list: Array<{ name: string; description: string }>, log: Logger): Promise<void> {
  const seen = new Set<string>();
  const commands = [{ name: 'start', description: 'Start: what this bot does' }, ...list]
    .filter((c) => /^[a-z0-9_]{1,32}$/.test(c.name) && !seen.has(c.name) && seen.add(c.name))
    .map((c) => ({ command: c.name, description: c.description.slice(0, 256) || c.name }));
  try {
    await bot.telegram.setMyCommands(commands);
  } catch (err) {
    log.warn({ err: describeError(err) }, 'setMyCommands failed (cosmetic, ignored)');
  }
}
