/**
 * MCP_CONFIG: the JSON file naming the MCP servers whose tools the model may call (src/mcp).
 * It is read and checked once at start, like every setting: a problem becomes one line naming
 * the file and the key, and the daemon exits 2. Unknown keys are refused by name, so a typo
 * never silently drops a limit. `${NAME}` in an `env` or `headers` value is the daemon's
 * environment variable NAME, so secrets stay out of the file; those values are log secrets.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isHttpUrl, type Env } from './reader.js';
import { AppError, isAppError } from '../core/errors.js';

export interface McpStdioTransport {
  kind: 'stdio';
  command: string;
  args: string[];
  /** Added to the few variables every child gets (PATH, HOME, …); the daemon's own settings are not passed on. */
  env: Record<string, string>;
  /** Resolved against the config file's folder; undefined: the daemon's working directory. */
  cwd: string | undefined;
}

export interface McpHttpTransport {
  kind: 'http';
  url: string;
  headers: Record<string, string>;
}

export interface McpServerConfig {
  /** Letters, digits, `-` and single `_`: the prefix of its tools' names (`<name>__<tool>`). */
  name: string;
  transport: McpStdioTransport | McpHttpTransport;
  /** Only these of its tools (the server's own names); undefined: all it lists. */
  tools: string[] | undefined;
  /** Group chats that get its tools: true every group, false none (the default), or these chat ids. */
  groups: boolean | string[];
  /** One call's deadline; undefined: TOOL_TIMEOUT_MS. */
  timeoutMs: number | undefined;
  /** The bound on one message it sends (src/mcp/cap.ts): its `maxAnswerBytes`, else MCP_MAX_ANSWER_BYTES. */
  maxAnswerBytes: number;
  /** Its tools taken at most (in the order it lists them): its `maxTools`, else DEFAULT_MAX_TOOLS or the length of `tools`. */
  maxTools: number;
}

export interface McpConfig {
  /** The file as resolved; undefined when MCP_CONFIG is unset. */
  file: string | undefined;
  servers: McpServerConfig[];
  /** Values taken from the environment through `${NAME}`: never shown in logs or replies. */
  secrets: string[];
}

export const NO_MCP: McpConfig = { file: undefined, servers: [], secrets: [] };

/** A server's tools taken at most when it sets no `maxTools`: each is sent with every request (~300 tokens). */
export const DEFAULT_MAX_TOOLS = 32;
/** The functions a chat request may hold (OpenAI refuses more): no server may ask for more. */
export const MAX_FUNCTIONS = 128;
/** MCP_MAX_ANSWER_BYTES unset: 10 MiB, as the SDK's own stdio transport bounds a line. */
export const DEFAULT_MAX_ANSWER_BYTES = 10 * 1024 * 1024;
/** The bounds of `maxAnswerBytes` and MCP_MAX_ANSWER_BYTES. */
export const ANSWER_BYTES_RANGE = [1_024, 1_073_741_824] as const;

/** What a server takes when its entry does not say. */
export interface McpDefaults {
  /** MCP_MAX_ANSWER_BYTES. */
  maxAnswerBytes: number;
}

const SERVER_KEYS = ['command', 'args', 'env', 'cwd', 'url', 'headers', 'tools', 'groups', 'timeoutMs', 'maxAnswerBytes', 'maxTools'] as const;
const NAME = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;
const MAX_NAME = 32;
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The first thing wrong, as the rest of the one line after the file's name. */
const problem = (text: string) => new AppError('config.invalid', { problem: text });

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads and checks the file; `problem` is the first thing wrong with it, as one line. */
export function readMcpConfig(raw: string, env: Env, cwd: string, defaults: McpDefaults): { config: McpConfig; problem?: string } {
  const file = path.resolve(cwd, raw);
  const where = `MCP_CONFIG ${file}`;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    return {
      config: { ...NO_MCP, file },
      problem: `${where} cannot be read (${code}) — check the path (a relative one starts at the daemon's working directory), or remove MCP_CONFIG`,
    };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    return { config: { ...NO_MCP, file }, problem: `${where} is not valid JSON (${(err as Error).message}) — fix the file` };
  }
  const secrets: string[] = [];
  try {
    const servers = readServers(data, env, path.dirname(file), secrets, defaults);
    return { config: { file, servers, secrets } };
  } catch (err) {
    if (!isAppError(err, 'config.invalid')) throw err;
    return { config: { ...NO_MCP, file }, problem: `${where}: ${err.message}` };
  }
}

function readServers(data: unknown, env: Env, dir: string, secrets: string[], defaults: McpDefaults): McpServerConfig[] {
  if (!isObject(data) || !isObject(data.servers)) throw problem('must be an object {"servers": {"<name>": {...}}}');
  for (const key of Object.keys(data)) if (key !== 'servers') throw problem(`"${key}" is not a known key — the file holds only "servers"`);
  return Object.entries(data.servers).map(([name, value]) => readServer(name, value, env, dir, secrets, defaults));
}

function readServer(name: string, s: unknown, env: Env, dir: string, secrets: string[], defaults: McpDefaults): McpServerConfig {
  if (!NAME.test(name) || name.length > MAX_NAME) {
    throw problem(`server name "${name}" may hold only letters, digits, - and single _ (up to ${MAX_NAME} characters): it prefixes its tools' names`);
  }
  const at = `servers.${name}`;
  if (!isObject(s)) throw problem(`${at} must be an object with "command" or "url"`);
  for (const key of Object.keys(s)) {
    if (!(SERVER_KEYS as readonly string[]).includes(key)) throw problem(`${at}.${key} is not a known key — use ${SERVER_KEYS.join(', ')}`);
  }
  if ((s.command === undefined) === (s.url === undefined))
    throw problem(
      `${at} needs either "command" (a program spoken to over stdio) or "url" (streamable HTTP), not ${s.command === undefined ? 'neither' : 'both'}`,
    );
  let transport: McpServerConfig['transport'];
  if (s.command !== undefined) {
    for (const key of ['url', 'headers']) if (s[key] !== undefined) throw problem(`${at}.${key} is for "url" servers; this one has "command"`);
    transport = {
      kind: 'stdio',
      command: nonEmpty(s.command, `${at}.command`),
      args: s.args === undefined ? [] : strings(s.args, `${at}.args`),
      env: strMap(s.env, `${at}.env`, env, secrets, (name) => SECRET_NAME.test(name)),
      cwd: s.cwd === undefined ? undefined : path.resolve(dir, nonEmpty(s.cwd, `${at}.cwd`)),
    };
  } else {
    for (const key of ['args', 'env', 'cwd']) if (s[key] !== undefined) throw problem(`${at}.${key} is for "command" servers; this one has "url"`);
    const url = nonEmpty(s.url, `${at}.url`);
    if (!isHttpUrl(url)) throw problem(`${at}.url ${JSON.stringify(url)} is not an http(s) URL`);
    // Every header value is kept out of the logs: headers are how a server is authenticated.
    transport = { kind: 'http', url, headers: strMap(s.headers, `${at}.headers`, env, secrets, () => true) };
  }
  let tools: string[] | undefined;
  if (s.tools !== undefined) {
    tools = strings(s.tools, `${at}.tools`);
    if (tools.length === 0) throw problem(`${at}.tools is empty — list the tools to allow, or remove it to allow all`);
  }
  const [minBytes, maxBytes] = ANSWER_BYTES_RANGE;
  return {
    name,
    transport,
    tools,
    groups: readGroups(s.groups, `${at}.groups`),
    timeoutMs: wholeIn(s.timeoutMs, 10, 600_000, `${at}.timeoutMs`, 'ms'),
    maxAnswerBytes: wholeIn(s.maxAnswerBytes, minBytes, maxBytes, `${at}.maxAnswerBytes`, 'bytes') ?? defaults.maxAnswerBytes,
    // Listing more than the default in `tools` asks for them all.
    maxTools: wholeIn(s.maxTools, 1, MAX_FUNCTIONS, `${at}.maxTools`, 'tools') ?? Math.max(DEFAULT_MAX_TOOLS, tools?.length ?? 0),
  };
}

function wholeIn(v: unknown, min: number, max: number, at: string, unit: string): number | undefined {
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || (v as number) < min || (v as number) > max) throw problem(`${at} must be a whole number of ${unit} from ${min} to ${max}`);
  return v as number;
}

function nonEmpty(v: unknown, at: string): string {
  if (typeof v !== 'string' || v.trim() === '') throw problem(`${at} must be a non-empty string`);
  return v;
}

function strings(v: unknown, at: string): string[] {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === '')) throw problem(`${at} must be a list of non-empty strings`);
  return v as string[];
}

/** An env entry named like a credential: its value, even written literally in the file, is a log secret. */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASS|AUTH|CRED/i;

/**
 * An object of strings, each `${NAME}` in a value replaced by that environment variable (a
 * secret from then on); a whole value is a secret too where `secret(key)` says so.
 */
function strMap(v: unknown, at: string, env: Env, secrets: string[], secret: (key: string) => boolean): Record<string, string> {
  if (v === undefined) return {};
  if (!isObject(v)) throw problem(`${at} must be an object of strings`);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(v)) {
    if (typeof value !== 'string') throw problem(`${at}.${key} must be a string`);
    out[key] = value.replace(REFERENCE, (_, ref: string) => {
      const got = env[ref];
      if (got === undefined || got === '')
        throw problem(`${at}.${key} uses \${${ref}}, which is not set in the environment — set it (e.g. in .env) or write the value`);
      secrets.push(got);
      return got;
    });
    if (secret(key)) {
      secrets.push(out[key]!);
      // "Bearer <token>": the token alone may be printed without its scheme.
      const token = /^\S+\s+(\S{8,})$/.exec(out[key]!)?.[1];
      if (token) secrets.push(token);
    }
  }
  return out;
}

function readGroups(v: unknown, at: string): boolean | string[] {
  if (v === undefined) return false;
  if (typeof v === 'boolean') return v;
  const ids = Array.isArray(v) ? v.map((x) => (typeof x === 'number' && Number.isSafeInteger(x) ? String(x) : x)) : undefined;
  if (!ids || ids.some((x) => typeof x !== 'string' || !/^-\d{1,20}$/.test(x))) {
    throw problem(`${at} must be true (every group), false (none) or a list of group chat ids such as "-1001234567890"`);
  }
  return ids as string[];
}
