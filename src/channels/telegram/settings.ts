/**
 * The Telegram channel's own settings (TELEGRAM_*), read by the channel with the settings reader
 * and kept in `config.channels.telegram`. The settings every channel shares (voice notes,
 * STREAMING, GROUP_ADMINS_MANAGE) are config's (config/env.ts).
 */
import { SettingsReader, isHttpUrl, type Env } from '../../config/reader.js';
import type { ChannelSection, ChannelSettings, Config } from '../../config/env.js';

export type DmPolicy = 'allowlist' | 'pairing' | 'open';

export interface TelegramConfig extends ChannelSection {
  /** Set: the daemon serves Telegram; unset: the terminal. Registered as a log secret by main. */
  botToken: string | undefined;
  /** Another Bot API server (a local Bot API server, a test emulator); undefined = Telegram's. */
  apiRoot: string | undefined;
  /** Numeric user ids (as strings) and lower-cased usernames without "@". */
  allowedUsers: string[];
  /** Numeric chat ids of groups the bot serves. */
  allowedGroups: string[];
  dmPolicy: DmPolicy;
  /** Set: webhook mode (updates are pushed to this public HTTPS URL); unset: long polling. */
  webhookUrl: string | undefined;
  webhookSecret: string | undefined;
  webhookHost: string;
  webhookPort: number;
  /** Reaction put on a group message the bot is answering; '' = none. */
  ackReaction: string;
}

const DM_POLICIES: readonly DmPolicy[] = ['allowlist', 'pairing', 'open'];

/** The TELEGRAM_* settings alone (what `loadConfig` keeps in `config.channels.telegram`), with their problems. */
export function loadTelegramConfig(
  env: Env = process.env,
  shared: Pick<Config, 'memoryScope'> = { memoryScope: 'chat' },
): { telegram: TelegramConfig; problems: string[] } {
  const r = new SettingsReader(env);
  return { telegram: readTelegram(r, shared), problems: r.problems };
}

/** The channel's section of the settings (the app lists it: app/channels.ts). */
export const TELEGRAM_SETTINGS: ChannelSettings<TelegramConfig> = { name: 'telegram', read: readTelegram };

function readTelegram(r: SettingsReader, shared: Pick<Config, 'memoryScope'>): TelegramConfig {
  const botToken = r.str('TELEGRAM_BOT_TOKEN');
  // The value is a secret: problems name the variable, never print it.
  if (botToken && !/^\d{1,20}:[A-Za-z0-9_-]{10,}$/.test(botToken)) {
    r.problem('TELEGRAM_BOT_TOKEN does not look like a bot token (digits, a colon, then letters) — copy it again from @BotFather');
  }

  const apiRoot = r.url('TELEGRAM_API_ROOT', 'use e.g. http://127.0.0.1:8081 for a local Bot API server, or remove it');

  const allowedUsers: string[] = [];
  for (const entry of r.list('TELEGRAM_ALLOWED_USERS')) {
    if (/^\d{1,20}$/.test(entry)) allowedUsers.push(entry);
    else if (/^@?[A-Za-z][A-Za-z0-9_]{3,31}$/.test(entry)) allowedUsers.push(entry.replace(/^@/, '').toLowerCase());
    else r.problem(`TELEGRAM_ALLOWED_USERS has ${JSON.stringify(entry)}, which is neither a numeric user id nor a @username — separate entries with commas`);
  }

  const allowedGroups: string[] = [];
  for (const entry of r.list('TELEGRAM_ALLOWED_GROUPS')) {
    if (/^-?\d{1,20}$/.test(entry)) allowedGroups.push(entry);
    else r.problem(`TELEGRAM_ALLOWED_GROUPS has ${JSON.stringify(entry)}, which is not a numeric chat id (groups look like -1001234567890)`);
  }

  const before = r.problems.length;
  const dmPolicy = r.oneOf(
    'TELEGRAM_DM_POLICY',
    DM_POLICIES,
    'pairing',
    'must be allowlist (only TELEGRAM_ALLOWED_USERS), pairing (strangers get a code to approve) or open (anyone)',
  );
  if (r.problems.length === before && botToken && dmPolicy === 'allowlist' && allowedUsers.length === 0) {
    r.problem(
      'TELEGRAM_DM_POLICY=allowlist but TELEGRAM_ALLOWED_USERS is empty, so nobody could talk to the bot — add your user id, or use TELEGRAM_DM_POLICY=pairing',
    );
  }

  const webhookUrl = r.str('TELEGRAM_WEBHOOK_URL');
  if (webhookUrl) {
    if (!isHttpUrl(webhookUrl)) {
      r.problem(
        `TELEGRAM_WEBHOOK_URL=${JSON.stringify(webhookUrl)} is not a URL — use the public https address Telegram should post to, e.g. https://bot.example.com/telegram`,
      );
    } else if (new URL(webhookUrl).protocol !== 'https:' && !isLoopback(new URL(webhookUrl).hostname)) {
      r.problem('TELEGRAM_WEBHOOK_URL must be https (Telegram posts only to HTTPS) — put a TLS reverse proxy in front, or remove it to use long polling');
    }
  }
  const webhookSecret = r.str('TELEGRAM_WEBHOOK_SECRET');
  if (webhookSecret && !/^[A-Za-z0-9_-]{1,256}$/.test(webhookSecret)) {
    r.problem('TELEGRAM_WEBHOOK_SECRET may hold only A-Z, a-z, 0-9, _ and - (1 to 256 characters) — pick another value');
  }
  const telegram: TelegramConfig = {
    configured: Boolean(botToken),
    secrets: [botToken, webhookSecret].filter((s): s is string => Boolean(s)),
    owners: allowedUsers,
    botToken,
    apiRoot,
    allowedUsers,
    allowedGroups,
    dmPolicy,
    webhookUrl,
    webhookSecret,
    webhookHost: r.str('TELEGRAM_WEBHOOK_HOST') ?? '127.0.0.1',
    webhookPort: r.int('TELEGRAM_WEBHOOK_PORT', 8787, 1, 65535, 'fix it or remove it to use 8787'),
    // Unset: 👀; set but empty: off (so an explicit empty line in .env turns it off).
    ackReaction: r.present('TELEGRAM_ACK_REACTION') ? (r.str('TELEGRAM_ACK_REACTION') ?? '') : '👀',
  };
  if (shared.memoryScope === 'global') {
    const problem = globalScopeProblem(telegram);
    if (problem) r.problem(problem);
  }
  return telegram;
}

/**
 * MEMORY_SCOPE=global is one memory for a single-owner bot: every chat the bot serves reads
 * the owner's MEMORY.md (in the prompt and with /memory). Served groups, or private chats open
 * to people the owner did not list, would hand it to them, so that combination is refused.
 */
export function globalScopeProblem(t: Pick<TelegramConfig, 'botToken' | 'allowedGroups' | 'dmPolicy'>): string | null {
  if (!t.botToken) return null;
  const who: string[] = [];
  const fix: string[] = [];
  if (t.allowedGroups.length > 0) {
    who.push('every member of the groups in TELEGRAM_ALLOWED_GROUPS');
    fix.push('remove TELEGRAM_ALLOWED_GROUPS');
  }
  if (t.dmPolicy !== 'allowlist') {
    who.push(`anyone TELEGRAM_DM_POLICY=${t.dmPolicy} lets into a private chat`);
    fix.push('set TELEGRAM_DM_POLICY=allowlist');
  }
  if (who.length === 0) return null;
  return `MEMORY_SCOPE=global would give ${who.join(' and ')} the owner's memory — set MEMORY_SCOPE=chat (each chat its own memory), or for a single-owner bot ${fix.join(' and ')}`;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
}
