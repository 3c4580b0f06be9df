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
}

export interface ConfigResult {
  config: Config;
  problems: string[];
}

type Env = Record<string, string | undefined>;

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
      apiKey = 'not-needed';
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
  };
  return { config, problems };
}
