/**
 * Settings from the environment (and `.env` via dotenv, loaded by main). Every value is
 * checked once at start; each problem becomes one line saying what to do, and main exits 2.
 */
import path from 'node:path';
import { SettingsReader, type Env, type SettingName } from './reader.js';
import { ANSWER_BYTES_RANGE, DEFAULT_MAX_ANSWER_BYTES, NO_MCP, readMcpConfig, type McpConfig } from './mcp.js';
import { readFallback, readModelChoices, type ModelEndpoint } from './models.js';
import { readDatabase, type DatabaseConfig } from './database.js';
import { databaseSecrets } from '../storage/pg/url.js';

export interface Config {
  openaiApiKey: string;
  openaiBaseUrl: string | undefined;
  model: string;
  modelBalanced: string;
  /** LLM_VISION: true/false overrides whether the model reads images; undefined = its catalogue entry. */
  vision: boolean | undefined;
  /** LLM_MODELS: what /model offers besides LLM_MODEL, each on the default server or its own (config/models.ts). */
  models: ModelEndpoint[];
  /** LLM_FALLBACK: the models a call goes on with, in order, when the one asked fails (llm/client.ts). */
  fallback: string[];
  llmTimeoutMs: number;
  llmMaxRetries: number;
  maxToolIterations: number;
  toolTimeoutMs: number;
  maxConcurrentTurns: number;
  workspaceDir: string;
  /** DATABASE_URL, DATABASE_POOL_SIZE: the state in PostgreSQL (config/database.ts). */
  database: DatabaseConfig;
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
  /** Per channel, the users (its ids, lower-case usernames) the budget does not apply to: the owners its settings list. */
  budgetExemptUsers: Readonly<Record<string, readonly string[]>>;
  /** A whole turn (compaction, prompt, every LLM round and tool) must end within this. */
  turnTimeoutMs: number;
  /** Messages one chat may send per minute; 0: no limit. */
  rateLimitPerMinute: number;
  /** Messages of one chat that may wait behind the one being answered. */
  maxQueuedPerChat: number;
  /** How long an album (Telegram media group) waits after its last item before it is answered as one message. */
  albumWaitMs: number;
  /** Reminder messages one chat gets per hour at most; due ones beyond it are folded into one. */
  remindersPerChatPerHour: number;
  /** Download and transcription of one voice note end within this (inside the turn's deadline). */
  transcriptionTimeoutMs: number;
  /** The memory page (src/web): 0 = off. */
  memoryPagePort: number;
  memoryPageHost: string;
  /** Unset: a random token kept in workspace/.memory-page-token. A log secret. */
  memoryPageToken: string | undefined;
  /** MEMORY_PAGE_ORIGIN: the origins the page is opened at besides its own address (a TLS proxy). */
  memoryPageOrigins: string[];
  /** TRANSCRIPTION_MODEL: the speech-to-text model for voice notes (audio transcriptions endpoint); undefined = off. */
  transcriptionModel: string | undefined;
  /** SHOW_TRANSCRIPT: echo a voice note's transcript before answering it. */
  showTranscript: boolean;
  /** STREAMING: how answers show while written, where the channel can: drafts (falling back to edits), edits of a placeholder, or not at all. */
  streaming: StreamingMode;
  /** GROUP_ADMINS_MANAGE: a group's admins may use the commands that reveal or change its shared memory, like the owners. */
  groupAdminsManage: boolean;
  /** Each channel's own settings, under its name, in the order the app lists the channels (loadConfig's `channels`). */
  channels: Readonly<Record<string, ChannelSection>>;
  /** MCP_CONFIG: the MCP servers whose tools the model may call (none when unset). */
  mcp: McpConfig;
}

export interface ConfigResult {
  config: Config;
  problems: string[];
  /** Lines to print without stopping (a setting still read under its old name). */
  warnings: string[];
}

/** The key given to the SDK when the server needs none; a placeholder, not a secret to scrub. */
export const NO_API_KEY = 'not-needed';

/** The secrets among the settings (what logs, files and replies must never show). */
export function configSecrets(config: Config): string[] {
  const out = config.openaiApiKey && config.openaiApiKey !== NO_API_KEY ? [config.openaiApiKey] : [];
  for (const section of Object.values(config.channels)) out.push(...section.secrets);
  out.push(...config.mcp.secrets);
  for (const m of config.models) if (m.apiKey) out.push(m.apiKey);
  if (config.database.url) out.push(...databaseSecrets(config.database.url));
  return out;
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

/**
 * Reads and validates settings. Never throws: problems are returned for main to print.
 * `channels`: the channels whose own settings are read too (the app's list, app/channels.ts).
 */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd(), channels: readonly ChannelSettings[] = []): ConfigResult {
  const r = new SettingsReader(env);

  const baseUrl = r.url('OPENAI_BASE_URL', 'use e.g. http://127.0.0.1:11434/v1');
  let apiKey = r.str('OPENAI_API_KEY');
  if (!apiKey) {
    if (baseUrl) {
      // Local servers (Ollama, vLLM, llama.cpp) accept any key; the SDK insists on one.
      apiKey = NO_API_KEY;
    } else {
      r.problem('OPENAI_API_KEY is not set — set it in .env, or set OPENAI_BASE_URL to a local OpenAI-compatible server');
    }
  }

  const logLevel = r.oneOf('LOG_LEVEL', LOG_LEVELS, 'info', `is not one of ${LOG_LEVELS.join(', ')}`);

  const timezone = r.str('TZ') ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!isValidTimezone(timezone)) {
    r.problem(`TZ=${JSON.stringify(timezone)} is not a known time zone — use an IANA name such as Europe/Berlin or UTC`);
  }

  const memoryScope = r.oneOf('MEMORY_SCOPE', ['chat', 'global'] as const, 'chat', 'must be "chat" (each chat its own memory) or "global" (one shared memory)');

  const sections: Record<string, ChannelSection> = {};
  for (const c of channels) sections[c.name] = c.read(r, { memoryScope });

  const model = r.str('LLM_MODEL') ?? 'gpt-4o-mini';
  const mcpFile = r.str('MCP_CONFIG');
  const maxAnswerBytes = r.int('MCP_MAX_ANSWER_BYTES', DEFAULT_MAX_ANSWER_BYTES, ...ANSWER_BYTES_RANGE);
  const mcp = mcpFile === undefined ? { config: NO_MCP } : readMcpConfig(mcpFile, env, cwd, { maxAnswerBytes });
  if (mcp.problem) r.problem(mcp.problem);
  const config: Config = {
    openaiApiKey: apiKey ?? '',
    openaiBaseUrl: baseUrl,
    model,
    modelBalanced: r.str('LLM_MODEL_BALANCED') ?? model,
    // Unset: the catalogue (src/llm/models.json) decides.
    vision: optionalBool(r, 'LLM_VISION', 'must be true (the model reads images) or false (text only) — or remove it to go by src/llm/models.json'),
    models: readModelChoices(r, env),
    fallback: readFallback(r),
    llmTimeoutMs: r.int('LLM_TIMEOUT_MS', 60_000, 100, 600_000),
    llmMaxRetries: r.int('LLM_MAX_RETRIES', 2, 0, 10),
    maxToolIterations: r.int('MAX_TOOL_ITERATIONS', 8, 1, 100),
    toolTimeoutMs: r.int('TOOL_TIMEOUT_MS', 30_000, 10, 600_000),
    maxConcurrentTurns: r.int('MAX_CONCURRENT_TURNS', 8, 1, 1000),
    workspaceDir: path.resolve(cwd, r.str('WORKSPACE_DIR') ?? 'workspace'),
    database: readDatabase(r),
    logLevel,
    logFile: r.str('LOG_FILE'),
    timezone,
    consoleChatId: r.str('CONSOLE_CHAT_ID') ?? 'local',
    shutdownTimeoutMs: r.int('SHUTDOWN_TIMEOUT_MS', 20_000, 0, 600_000),
    memoryScope,
    consolidationTimeoutMs: r.int('CONSOLIDATION_TIMEOUT_MS', 30_000, 100, 600_000),
    maxMemorySize: r.int('MAX_MEMORY_SIZE', 8192, 256, 10_000_000),
    summaryTimeoutMs: r.int('COMPACTION_TIMEOUT_MS', 15_000, 100, 600_000),
    embeddingsModel: r.str('EMBEDDINGS_MODEL'),
    embeddingsDimensions: r.int('EMBEDDINGS_DIMENSIONS', 256, 8, 4096),
    maxMessageChars: r.int('MAX_MESSAGE_CHARS', 20_000, 100, 1_000_000),
    dailyTokenBudget: r.int('DAILY_TOKEN_BUDGET', 0, 0, 1_000_000_000_000) || undefined,
    budgetExemptUsers: r.bool('DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS', true, 'must be true (users in TELEGRAM_ALLOWED_USERS have no budget) or false')
      ? Object.fromEntries(Object.entries(sections).map(([name, section]) => [name, section.owners]))
      : {},
    turnTimeoutMs: r.int('TURN_TIMEOUT_MS', 120_000, 1_000, 3_600_000),
    rateLimitPerMinute: r.int('RATE_LIMIT_PER_MINUTE', 20, 0, 10_000),
    maxQueuedPerChat: r.int('MAX_QUEUED_PER_CHAT', 10, 1, 10_000),
    albumWaitMs: r.int('ALBUM_WAIT_MS', 1200, 0, 60_000),
    remindersPerChatPerHour: r.int('REMINDERS_PER_CHAT_PER_HOUR', 10, 1, 1000),
    transcriptionTimeoutMs: 0,
    memoryPagePort: r.int('MEMORY_PAGE_PORT', 0, 0, 65535),
    memoryPageHost: r.str('MEMORY_PAGE_HOST') ?? '127.0.0.1',
    memoryPageToken: r.str('MEMORY_PAGE_TOKEN'),
    memoryPageOrigins: pageOrigins(r),
    ...readVoiceAndGroups(r),
    channels: sections,
    mcp: mcp.config,
  };
  // A note is transcribed inside its turn: its own deadline must leave the turn time to answer.
  const turnMs = config.turnTimeoutMs;
  config.transcriptionTimeoutMs = r.int('TRANSCRIPTION_TIMEOUT_MS', Math.min(60_000, Math.floor(turnMs / 2)), 1_000, 600_000);
  if (r.str('TRANSCRIPTION_TIMEOUT_MS') !== undefined && config.transcriptionTimeoutMs >= turnMs) {
    r.problem(
      `TRANSCRIPTION_TIMEOUT_MS=${config.transcriptionTimeoutMs} is not shorter than TURN_TIMEOUT_MS=${turnMs} — a voice note is transcribed inside its turn; make it shorter, or remove it to use half the turn (at most 60000)`,
    );
  }
  if (config.memoryPageToken !== undefined && config.memoryPageToken.length < 16) {
    r.problem('MEMORY_PAGE_TOKEN is shorter than 16 characters — use a longer random value, or remove it to get a random one');
  }
  return { config, problems: r.problems, warnings: r.warnings };
}

/**
 * MEMORY_PAGE_ORIGIN: the addresses people open the memory page at when it is not reached on
 * loopback (behind a TLS proxy: `https://memory.example.com`), comma-separated. The page takes a
 * request only with a Host of its own address or of one of these, so listening on 0.0.0.0 does
 * not open it to DNS rebinding. Each is kept as its origin (scheme, host, port).
 */
function pageOrigins(r: SettingsReader): string[] {
  const out: string[] = [];
  for (const raw of r.list('MEMORY_PAGE_ORIGIN')) {
    let url: URL | undefined;
    try {
      url = new URL(raw);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || (url.pathname !== '/' && url.pathname !== '') || url.search || url.username) {
      r.problem(`MEMORY_PAGE_ORIGIN has ${JSON.stringify(raw)}, which is not an address like https://memory.example.com (scheme and host, no path)`);
      continue;
    }
    out.push(url.origin);
  }
  return out;
}

/** A yes/no setting whose absence means "decide elsewhere": undefined when unset or invalid (a problem line). */
function optionalBool(r: SettingsReader, name: SettingName, explain: string): boolean | undefined {
  if (r.str(name) === undefined) return undefined;
  const problems = r.problems.length;
  const value = r.bool(name, false, explain);
  return r.problems.length > problems ? undefined : value;
}

/**
 * A channel's own settings (TELEGRAM_* …), kept in `config.channels` under its name. The channel
 * reads them itself (channels/<name>/settings.ts) with the same reader, so its problems are
 * printed with everyone's; what the rest of the daemon needs of them is said here.
 */
export interface ChannelSection {
  /** Its settings ask for it to be served (Telegram: a bot token is set). */
  configured: boolean;
  /** Values that logs, files and replies must never show. */
  secrets: string[];
  /** The bot's owners as its settings list them (its user ids, lower-case usernames): DAILY_TOKEN_BUDGET does not apply to them. */
  owners: string[];
}

/** How a channel reads its section; the shared settings it may check against come as `shared`. */
export interface ChannelSettings<S extends ChannelSection = ChannelSection> {
  readonly name: string;
  read(r: SettingsReader, shared: Pick<Config, 'memoryScope'>): S;
}

export type StreamingMode = 'off' | 'draft' | 'edit';
const STREAMING_MODES: readonly StreamingMode[] = ['off', 'draft', 'edit'];

/** The settings of voice notes, answers shown while written and group admins: every channel's, not one's. */
function readVoiceAndGroups(r: SettingsReader): Pick<Config, 'transcriptionModel' | 'showTranscript' | 'streaming' | 'groupAdminsManage'> {
  const transcription = r.str('TRANSCRIPTION_MODEL') ?? 'whisper-1';
  return {
    transcriptionModel: transcription.toLowerCase() === 'off' ? undefined : transcription,
    showTranscript: r.bool('SHOW_TRANSCRIPT', false),
    streaming: r.oneOf(
      'STREAMING',
      STREAMING_MODES,
      'draft',
      'must be draft (live drafts in private chats, else an edited message), edit (always an edited message) or off (the answer appears when done)',
    ),
    groupAdminsManage: r.bool(
      'GROUP_ADMINS_MANAGE',
      false,
      "must be on (a group's Telegram admins may use /export, /forget, /new … there) or off (only TELEGRAM_ALLOWED_USERS)",
    ),
  };
}
