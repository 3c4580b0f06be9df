/**
 * Settings from the environment (and `.env` via dotenv, loaded by main). Every value is
 * checked once at start; each problem becomes one line saying what to do, and main exits 2.
 */
import path from 'node:path';

export interface Config {
  openaiApiKey: string;
  openaiBaseUrl: string | undefined;
  model: string;
  modelBalanced: string;
  llmTimeoutMs: number;
  llmMaxRetries: number;
  maxToolIterations: number;
  toolTimeoutMs: number;
  maxConcurrentTurns: number;
  workspaceDir: string;
  logLevel: string;
  logFile: string | undefined;
  timezone: string;
  consoleChatId: string;
  shutdownTimeoutMs: number;
  memoryScope: 'chat' | 'global';
  consolidationTimeoutMs: number;
  maxMemorySize: number;
  summaryTimeoutMs: number;
  embeddingsModel: string | undefined;
  embeddingsDimensions: number;
  maxMessageChars: number;
  /** DAILY_TOKEN_BUDGET: tokens per chat per day; undefined = no budget. */
  dailyTokenBudget: number | undefined;
  /** Users (numeric ids, lower-case usernames) the budget does not apply to. */
  budgetExemptUsers: string[];
  /** A whole turn (compaction, prompt, every LLM round and tool) must end within this. */
  turnTimeoutMs: number;
  /** Messages one chat may send per minute; 0: no limit. */
  rateLimitPerMinute: number;
  /** Messages of one chat that may wait behind the one being answered. */
  maxQueuedPerChat: number;
  /** The memory page (src/web): 0 = off. */
  memoryPagePort: number;
  memoryPageHost: string;
  /** Unset: a random token kept in workspace/.memory-page-token. A log secret. */
  memoryPageToken: string | undefined;
}

export interface ConfigResult {
  config: Config;
  problems: string[];
}

type Env = Record<string, string | undefined>;

/** The key given to the SDK when the server needs none; a placeholder, not a secret to scrub. */
export const NO_API_KEY = 'not-needed';

/** The secrets among the settings (what logs, files and replies must never show). */
export function configSecrets(config: Config): string[] {
  return config.openaiApiKey && config.openaiApiKey !== NO_API_KEY ? [config.openaiApiKey] : [];
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Reads and validates settings. Never throws: problems are returned for main to print. */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): ConfigResult {
  const problems: string[] = [];
  const str = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = str(name);
    if (raw === undefined) return def;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name}=${JSON.stringify(raw)} is not a whole number from ${min} to ${max} — fix it in .env or remove it to use ${def}`);
      return def;
    }
    return n;
  };

  const baseUrl = str('OPENAI_BASE_URL');
  let apiKey = str('OPENAI_API_KEY');
  if (!apiKey) {
    if (baseUrl) {
      // Local servers (Ollama, vLLM, llama.cpp) accept any key; the SDK insists on one.
      apiKey = NO_API_KEY;
    } else {
      problems.push('OPENAI_API_KEY is not set — set it in .env, or set OPENAI_BASE_URL to a local OpenAI-compatible server');
    }
  }
  if (baseUrl) {
    try {
      const u = new URL(baseUrl);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
    } catch {
      problems.push(`OPENAI_BASE_URL=${JSON.stringify(baseUrl)} is not an http(s) URL — use e.g. http://127.0.0.1:11434/v1`);
    }
  }

  const logLevel = (str('LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL=${JSON.stringify(logLevel)} is not one of ${LOG_LEVELS.join(', ')}`);
  }

  const timezone = str('TZ') ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!isValidTimezone(timezone)) {
    problems.push(`TZ=${JSON.stringify(timezone)} is not a known time zone — use an IANA name such as Europe/Berlin or UTC`);
  }

  const scopeRaw = (str('MEMORY_SCOPE') ?? 'chat').toLowerCase();
  if (scopeRaw !== 'chat' && scopeRaw !== 'global') {
    problems.push(`MEMORY_SCOPE=${JSON.stringify(scopeRaw)} must be "chat" (each chat its own memory) or "global" (one shared memory)`);
  }

  // Telegram settings live in their own object (loadTelegramConfig); their problems are reported here too.
  const tg = loadTelegramConfig(env);
  problems.push(...tg.problems);
  if (scopeRaw === 'global') {
    const shared = globalScopeProblem(tg.telegram);
    if (shared) problems.push(shared);
  }

  const model = str('LLM_MODEL') ?? 'gpt-4o-mini';
  const config: Config = {
    openaiApiKey: apiKey ?? '',
    openaiBaseUrl: baseUrl,
    model,
    modelBalanced: str('LLM_MODEL_BALANCED') ?? model,
    llmTimeoutMs: int('LLM_TIMEOUT_MS', 60_000, 100, 600_000),
    llmMaxRetries: int('LLM_MAX_RETRIES', 2, 0, 10),
    maxToolIterations: int('MAX_TOOL_ITERATIONS', 8, 1, 100),
    toolTimeoutMs: int('TOOL_TIMEOUT_MS', 30_000, 10, 600_000),
    maxConcurrentTurns: int('MAX_CONCURRENT_TURNS', 8, 1, 1000),
    workspaceDir: path.resolve(cwd, str('WORKSPACE_DIR') ?? 'workspace'),
    logLevel,
    logFile: str('LOG_FILE'),
    timezone,
    consoleChatId: str('CONSOLE_CHAT_ID') ?? 'local',
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', 20_000, 0, 600_000),
    memoryScope: scopeRaw === 'global' ? 'global' : 'chat',
    consolidationTimeoutMs: int('CONSOLIDATION_TIMEOUT', 30_000, 100, 600_000),
    maxMemorySize: int('MAX_MEMORY_SIZE', 8192, 256, 10_000_000),
    summaryTimeoutMs: int('COMPACTION_TIMEOUT', 15_000, 100, 600_000),
    embeddingsModel: str('EMBEDDINGS_MODEL'),
    embeddingsDimensions: int('EMBEDDINGS_DIMENSIONS', 256, 8, 4096),
    maxMessageChars: int('MAX_MESSAGE_CHARS', 20_000, 100, 1_000_000),
    dailyTokenBudget: int('DAILY_TOKEN_BUDGET', 0, 0, 1_000_000_000_000) || undefined,
    budgetExemptUsers: budgetExemptAllowed(env, problems) ? loadTelegramConfig(env).telegram.allowedUsers : [],
    turnTimeoutMs: int('TURN_TIMEOUT_MS', 120_000, 1_000, 3_600_000),
    rateLimitPerMinute: int('RATE_LIMIT_PER_MINUTE', 20, 0, 10_000),
    maxQueuedPerChat: int('MAX_QUEUED_PER_CHAT', 10, 1, 10_000),
    memoryPagePort: int('MEMORY_PAGE_PORT', 0, 0, 65535),
    memoryPageHost: str('MEMORY_PAGE_HOST') ?? '127.0.0.1',
    memoryPageToken: str('MEMORY_PAGE_TOKEN'),
  };
  if (config.memoryPageToken !== undefined && config.memoryPageToken.length < 16) {
    problems.push('MEMORY_PAGE_TOKEN is shorter than 16 characters — use a longer random value, or remove it to get a random one');
  }
  return { config, problems };
}

/** DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS: true (default) or false. */
function budgetExemptAllowed(env: Env, problems: string[]): boolean {
  const raw = env.DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS?.trim().toLowerCase();
  if (!raw || raw === 'true' || raw === '1' || raw === 'yes') return true;
  if (raw === 'false' || raw === '0' || raw === 'no') return false;
  problems.push(`DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS=${JSON.stringify(raw)} must be true (users in TELEGRAM_ALLOWED_USERS have no budget) or false`);
  return true;
}

export type DmPolicy = 'allowlist' | 'pairing' | 'open';

export interface TelegramConfig {
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
  /** Speech-to-text model for voice notes (audio transcriptions endpoint); undefined = off. */
  transcriptionModel: string | undefined;
  /** Echo a voice note's transcript before answering it. */
  showTranscript: boolean;
}

const DM_POLICIES: DmPolicy[] = ['allowlist', 'pairing', 'open'];

/**
 * Reads and validates the TELEGRAM_* settings. Never throws; `loadConfig` includes these
 * problems in its own list, so main prints them with the rest and exits 2.
 */
export function loadTelegramConfig(env: Env = process.env): { telegram: TelegramConfig; problems: string[] } {
  const problems: string[] = [];
  const str = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  const list = (name: string): string[] =>
    (str(name) ?? '')
      .split(/[\s,]+/)
      .map((x) => x.trim())
      .filter(Boolean);

  const botToken = str('TELEGRAM_BOT_TOKEN');
  // The value is a secret: problems name the variable, never print it.
  if (botToken && !/^\d{1,20}:[A-Za-z0-9_-]{10,}$/.test(botToken)) {
    problems.push('TELEGRAM_BOT_TOKEN does not look like a bot token (digits, a colon, then letters) — copy it again from @BotFather');
  }

  const apiRoot = str('TELEGRAM_API_ROOT');
  if (apiRoot && !isHttpUrl(apiRoot)) {
    problems.push(`TELEGRAM_API_ROOT=${JSON.stringify(apiRoot)} is not an http(s) URL — use e.g. http://127.0.0.1:8081 for a local Bot API server, or remove it`);
  }

  const allowedUsers: string[] = [];
  for (const entry of list('TELEGRAM_ALLOWED_USERS')) {
    if (/^\d{1,20}$/.test(entry)) allowedUsers.push(entry);
    else if (/^@?[A-Za-z][A-Za-z0-9_]{3,31}$/.test(entry)) allowedUsers.push(entry.replace(/^@/, '').toLowerCase());
    else problems.push(`TELEGRAM_ALLOWED_USERS has ${JSON.stringify(entry)}, which is neither a numeric user id nor a @username — separate entries with commas`);
  }

  const allowedGroups: string[] = [];
  for (const entry of list('TELEGRAM_ALLOWED_GROUPS')) {
    if (/^-?\d{1,20}$/.test(entry)) allowedGroups.push(entry);
    else problems.push(`TELEGRAM_ALLOWED_GROUPS has ${JSON.stringify(entry)}, which is not a numeric chat id (groups look like -1001234567890)`);
  }

  const policyRaw = (str('TELEGRAM_DM_POLICY') ?? 'pairing').toLowerCase();
  const dmPolicy = DM_POLICIES.includes(policyRaw as DmPolicy) ? (policyRaw as DmPolicy) : 'pairing';
  if (dmPolicy !== policyRaw) {
    problems.push(`TELEGRAM_DM_POLICY=${JSON.stringify(policyRaw)} must be allowlist (only TELEGRAM_ALLOWED_USERS), pairing (strangers get a code to approve) or open (anyone)`);
  } else if (botToken && dmPolicy === 'allowlist' && allowedUsers.length === 0) {
    problems.push('TELEGRAM_DM_POLICY=allowlist but TELEGRAM_ALLOWED_USERS is empty, so nobody could talk to the bot — add your user id, or use TELEGRAM_DM_POLICY=pairing');
  }

  const webhookUrl = str('TELEGRAM_WEBHOOK_URL');
  if (webhookUrl) {
    if (!isHttpUrl(webhookUrl)) {
      problems.push(`TELEGRAM_WEBHOOK_URL=${JSON.stringify(webhookUrl)} is not a URL — use the public https address Telegram should post to, e.g. https://bot.example.com/telegram`);
    } else if (new URL(webhookUrl).protocol !== 'https:' && !isLoopback(new URL(webhookUrl).hostname)) {
      problems.push('TELEGRAM_WEBHOOK_URL must be https (Telegram posts only to HTTPS) — put a TLS reverse proxy in front, or remove it to use long polling');
    }
  }
  const webhookSecret = str('TELEGRAM_WEBHOOK_SECRET');
  if (webhookSecret && !/^[A-Za-z0-9_-]{1,256}$/.test(webhookSecret)) {
    problems.push('TELEGRAM_WEBHOOK_SECRET may hold only A-Z, a-z, 0-9, _ and - (1 to 256 characters) — pick another value');
  }
  const webhookHost = str('TELEGRAM_WEBHOOK_HOST') ?? '127.0.0.1';
  let webhookPort = 8787;
  const portRaw = str('TELEGRAM_WEBHOOK_PORT');
  if (portRaw !== undefined) {
    const n = Number(portRaw);
    if (Number.isInteger(n) && n >= 1 && n <= 65535) webhookPort = n;
    else problems.push(`TELEGRAM_WEBHOOK_PORT=${JSON.stringify(portRaw)} is not a port number from 1 to 65535 — fix it or remove it to use 8787`);
  }

  return {
    telegram: {
      botToken,
      apiRoot,
      allowedUsers,
      allowedGroups,
      dmPolicy,
      webhookUrl,
      webhookSecret,
      webhookHost,
      webhookPort,
      // Unset: 👀; set but empty: off (so an explicit empty line in .env turns it off).
      ackReaction: env.TELEGRAM_ACK_REACTION === undefined ? '👀' : env.TELEGRAM_ACK_REACTION.trim(),
      transcriptionModel: (str('TRANSCRIPTION_MODEL') ?? 'whisper-1').toLowerCase() === 'off' ? undefined : (str('TRANSCRIPTION_MODEL') ?? 'whisper-1'),
      showTranscript: /^(1|true|yes|on)$/i.test(str('SHOW_TRANSCRIPT') ?? ''),
    },
    problems,
  };
}

/**
 * MEMORY_SCOPE=global is one memory for a single-owner bot: every chat the bot serves reads
 * the owner's MEMORY.md (in the prompt and with /memory). Served groups, or private chats open
 * to people the owner did not list, would hand it to them, so that combination is refused.
 */
export function globalScopeProblem(t: TelegramConfig): string | null {
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

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
}
