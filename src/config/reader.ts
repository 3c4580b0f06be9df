/**
 * The settings the daemon reads from the environment, in one table, and the one reader that
 * reads them. The table is the list docs/configuration.md's settings table and .env.example must show (a
 * test checks all three agree); the reader takes only names from it, so a setting cannot be
 * read without being listed. Each bad value becomes one line in `problems`; a renamed setting
 * still read under its old name adds one line to `warnings`.
 */

/** Every setting, in the order of docs/configuration.md's table. Add a new one here, to that table and to .env.example. */
export const SETTINGS = [
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'LLM_MODEL',
  'LLM_MODEL_BALANCED',
  'LLM_VISION',
  'LLM_MODELS',
  'LLM_FALLBACK',
  'LLM_TIMEOUT_MS',
  'LLM_MAX_RETRIES',
  'MAX_TOOL_ITERATIONS',
  'TOOL_TIMEOUT_MS',
  'MAX_CONCURRENT_TURNS',
  'TURN_TIMEOUT_MS',
  'RATE_LIMIT_PER_MINUTE',
  'MAX_QUEUED_PER_CHAT',
  'ALBUM_WAIT_MS',
  'REMINDERS_PER_CHAT_PER_HOUR',
  'WORKSPACE_DIR',
  'DATABASE_URL',
  'DATABASE_POOL_SIZE',
  'CLUSTER_LEASE_MS',
  'MEMORY_SCOPE',
  'TZ',
  'LOG_LEVEL',
  'LOG_FILE',
  'CONSOLE_CHAT_ID',
  'SHUTDOWN_TIMEOUT_MS',
  'MAX_MESSAGE_CHARS',
  'CONSOLIDATION_TIMEOUT_MS',
  'COMPACTION_TIMEOUT_MS',
  'MAX_MEMORY_SIZE',
  'DAILY_TOKEN_BUDGET',
  'DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS',
  'EMBEDDINGS_MODEL',
  'EMBEDDINGS_DIMENSIONS',
  'MCP_CONFIG',
  'MCP_MAX_ANSWER_BYTES',
  'TELEGRAM_BOT_TOKEN',
  'TELEGRAM_API_ROOT',
  'TELEGRAM_ALLOWED_USERS',
  'TELEGRAM_ALLOWED_GROUPS',
  'GROUP_ADMINS_MANAGE',
  'TELEGRAM_DM_POLICY',
  'TELEGRAM_WEBHOOK_URL',
  'TELEGRAM_WEBHOOK_SECRET',
  'TELEGRAM_WEBHOOK_HOST',
  'TELEGRAM_WEBHOOK_PORT',
  'TELEGRAM_ACK_REACTION',
  'TRANSCRIPTION_MODEL',
  'TRANSCRIPTION_TIMEOUT_MS',
  'SHOW_TRANSCRIPT',
  'STREAMING',
  'MEMORY_PAGE_PORT',
  'MEMORY_PAGE_HOST',
  'MEMORY_PAGE_TOKEN',
  'MEMORY_PAGE_ORIGIN',
] as const;

export type SettingName = (typeof SETTINGS)[number];

/** Old names still accepted (with a warning), and the setting each became. */
export const RENAMED: Readonly<Record<string, SettingName>> = {
  CONSOLIDATION_TIMEOUT: 'CONSOLIDATION_TIMEOUT_MS',
  COMPACTION_TIMEOUT: 'COMPACTION_TIMEOUT_MS',
};

export type Env = Record<string, string | undefined>;

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

export class SettingsReader {
  readonly problems: string[] = [];
  readonly warnings: string[] = [];

  constructor(private readonly env: Env) {}

  /** The value as written (untrimmed) and the name it was found under; undefined when unset. */
  private find(name: SettingName): { as: string; value: string } | undefined {
    const old = Object.keys(RENAMED).find((k) => RENAMED[k] === name && this.env[k] !== undefined);
    if (old !== undefined && !this.warnings.some((w) => w.startsWith(`${old} `))) {
      this.warnings.push(`${old} is deprecated — rename it to ${name} in .env${this.env[name] !== undefined ? ` (${name} is set too and wins)` : ''}`);
    }
    if (this.env[name] !== undefined) return { as: name, value: this.env[name]! };
    return old !== undefined ? { as: old, value: this.env[old]! } : undefined;
  }

  /** Adds a problem line (for checks that involve more than one value). */
  problem(line: string): void {
    this.problems.push(line);
  }

  /** True when the setting is present at all, even empty (an empty value can mean "off"). */
  present(name: SettingName): boolean {
    return this.find(name) !== undefined;
  }

  /** The trimmed value; undefined when unset or blank. */
  str(name: SettingName): string | undefined {
    const v = this.find(name)?.value.trim();
    return v ? v : undefined;
  }

  /** A whole number from `min` to `max`; `def` when unset or bad (a bad value is a problem). */
  int(name: SettingName, def: number, min: number, max: number, fix = `fix it in .env or remove it to use ${def}`): number {
    const raw = this.str(name);
    if (raw === undefined) return def;
    const n = Number(raw);
    if (Number.isInteger(n) && n >= min && n <= max) return n;
    this.problems.push(`${this.find(name)!.as}=${JSON.stringify(raw)} is not a whole number from ${min} to ${max} — ${fix}`);
    return def;
  }

  /** An http(s) URL, or undefined; anything else is a problem ending in `fix`. */
  url(name: SettingName, fix: string): string | undefined {
    const raw = this.str(name);
    if (raw !== undefined && !isHttpUrl(raw)) this.problems.push(`${this.find(name)!.as}=${JSON.stringify(raw)} is not an http(s) URL — ${fix}`);
    return raw;
  }

  /** Entries separated by commas or spaces. */
  list(name: SettingName): string[] {
    return (this.str(name) ?? '').split(/[\s,]+/).filter(Boolean);
  }

  /** One of `values` (case-insensitive); `def` when unset. Else a problem: `NAME="value" <explain>`. */
  oneOf<T extends string>(name: SettingName, values: readonly T[], def: T, explain: string): T {
    const raw = (this.str(name) ?? def).toLowerCase();
    if ((values as readonly string[]).includes(raw)) return raw as T;
    this.problems.push(`${this.find(name)!.as}=${JSON.stringify(raw)} ${explain}`);
    return def;
  }

  /**
   * true/yes/on/1 or false/no/off/0; `def` when unset. Another value is a problem when `explain`
   * is given, else it counts as false.
   */
  bool(name: SettingName, def: boolean, explain?: string): boolean {
    const raw = this.str(name)?.toLowerCase();
    if (raw === undefined) return def;
    if (TRUE.includes(raw)) return true;
    if (FALSE.includes(raw) || explain === undefined) return false;
    this.problems.push(`${this.find(name)!.as}=${JSON.stringify(raw)} ${explain}`);
    return def;
  }
}

export function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
