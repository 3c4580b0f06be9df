/**
 * `npm run doctor` — checks what the daemon needs and prints one table row per check: config
 * valid, workspace writable, LLM reachable (one tiny request), Telegram getMe (when a token is
 * set), the database (when DATABASE_URL is set), SQLite and sqlite-vec load, disk space, each MCP
 * server (connect and list its tools).
 * Exits 1 when any check fails, printing the fix for each problem on one line; 0 otherwise
 * (warnings included).
 */
import { createRequire } from 'node:module';
import { readFile, statfs, unlink } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadDotEnv } from '../config/dotenv.js';
import { configSecrets, loadConfig, type Config } from '../config/env.js';
import { CHANNELS } from '../app/channels.js';
import { loadTelegramConfig } from '../channels/telegram/settings.js';
import { uniqueNames } from '../config/models.js';
import { LlmClient } from '../llm/client.js';
import { LlmError } from '../llm/errors.js';
import { registerSecret, scrubSecrets, silentLogger } from '../core/log.js';
import { ensureDir, writeFileAtomic } from '../storage/atomic.js';
import { readStoredToken, TOKEN_NAME, tokenFile } from '../web/token.js';
import { Database } from '../storage/pg/database.js';
import { healthLine } from '../storage/pg/health.js';
import { PgKeptValue } from '../storage/pg/kept-pg.js';
import type { KeptValue } from '../storage/kept.js';
import { pageAddress } from '../web/address.js';
import { AppError } from '../core/errors.js';
import { setAsideCopies } from '../storage/sqlite.js';
import { checkMcpServers } from '../mcp/check.js';
import { answerHelp } from './help.js';
import { getMe, telegramClient, tokenRefused } from './setup-checks.js';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface CheckResult {
  name: string;
  status: CheckStatus;
  detail: string;
  /** What to do, in one line (for warn and fail). */
  fix?: string | undefined;
}

export interface DoctorOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Per network check (ms). */
  timeoutMs?: number;
}

const MB = 1024 * 1024;

export async function runDoctor(opts: DoctorOptions = {}): Promise<CheckResult[]> {
  const env = opts.env ?? process.env;
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const { config, problems } = loadConfig(env, opts.cwd, CHANNELS);
  const { telegram } = loadTelegramConfig(env);
  for (const s of configSecrets(config)) registerSecret(s);
  const results: CheckResult[] = [];

  results.push(
    problems.length === 0
      ? { name: 'config', status: 'ok', detail: 'all settings valid' }
      : { name: 'config', status: 'fail', detail: `${problems.length} problem(s): ${problems.join(' | ')}`, fix: problems[0] },
  );

  results.push(await checkWorkspace(config.workspaceDir));

  const llmConfigured = !problems.some((p) => /^OPENAI_/.test(p));
  if (llmConfigured) results.push(...(await checkLlms(config, timeoutMs)));
  else results.push({ name: 'LLM', status: 'skip', detail: 'not checked: the OPENAI_* settings above are invalid' });

  if (!telegram.botToken) results.push({ name: 'Telegram', status: 'skip', detail: 'TELEGRAM_BOT_TOKEN not set: the daemon runs in the terminal' });
  else if (problems.some((p) => /^TELEGRAM_(BOT_TOKEN|API_ROOT)/.test(p)))
    results.push({ name: 'Telegram', status: 'skip', detail: 'not checked: the TELEGRAM_* settings above are invalid' });
  else results.push(await checkTelegram(telegram.botToken, telegram.apiRoot, timeoutMs));

  let db: Database | undefined;
  if (config.database.url) {
    db = new Database({ url: config.database.url, poolSize: 1, log: silentLogger(), waitMs: timeoutMs, applicationName: 'membot-doctor' });
    const row = await checkDatabase(db);
    results.push(row);
    if (row.status === 'ok') results.push(await clusterRow(db, config.database.leaseMs));
  }
  results.push(...checkSqlite());
  results.push(checkSetAside(config.workspaceDir));
  results.push(await checkDisk(config.workspaceDir));
  results.push(...(await checkMcpServers(config.mcp, timeoutMs)));
  // The token is where the daemon keeps it: the database with DATABASE_URL (app/stores.ts), else the workspace.
  const tokenStore = db ? new PgKeptValue(db, TOKEN_NAME) : tokenFile(config.workspaceDir);
  if (config.memoryPagePort) results.push(await memoryPageRow(config.memoryPageHost, config.memoryPagePort, config.memoryPageToken, tokenStore));
  await db?.close();
  return results;
}

/**
 * DATABASE_URL: where the state is kept (never the password), whether it answers now, and the
 * server's version; a database that does not answer within the check's time fails.
 */
async function checkDatabase(db: Database): Promise<CheckResult> {
  try {
    const { rows } = await db.query<{ v: string; migrations: number | null }>(
      "SELECT current_setting('server_version') AS v, (SELECT count(*)::int FROM pg_tables WHERE tablename = 'schema_migrations') AS migrations",
    );
    const fresh = rows[0]?.migrations === 0 ? ' (empty: the daemon creates its tables at its first start)' : '';
    return { name: 'database', status: 'ok', detail: `${healthLine(db.where, db.health())}, server ${rows[0]?.v ?? '?'}${fresh}` };
  } catch (err) {
    return {
      name: 'database',
      status: 'fail',
      detail: scrubSecrets(`${healthLine(db.where, db.health())}: ${(err as Error).message}`),
      fix: `check that PostgreSQL runs at ${db.where} and that DATABASE_URL's user, password and database are right`,
    };
  }
}

/** The processes serving the bot from the database and the leases they hold (docs/cluster.md). */
async function clusterRow(db: Database, leaseMs: number): Promise<CheckResult> {
  const { clusterCheck, clusterReport } = await import('../cluster/status.js');
  try {
    return clusterCheck(await clusterReport(db, leaseMs));
  } catch {
    return { name: 'cluster', status: 'skip', detail: 'no process has started on this database yet' };
  }
}

/** The memory page's link with its token (the owner's way back to a random token). */
async function memoryPageRow(host: string, port: number, configured: string | undefined, store: KeptValue): Promise<CheckResult> {
  const token = configured ?? (await readStoredToken(store));
  const base = pageAddress(host, port);
  return token
    ? { name: 'memory page', status: 'ok', detail: `${base}?token=${token}` }
    : { name: 'memory page', status: 'ok', detail: `${base} (the daemon makes its token at first start; run doctor again then)` };
}

async function checkWorkspace(dir: string): Promise<CheckResult> {
  const probe = path.join(dir, `.doctor-${process.pid}`);
  try {
    await ensureDir(dir);
    await writeFileAtomic(probe, 'ok');
    if ((await readFile(probe, 'utf8')) !== 'ok')
      throw new AppError('storage.write_failed', { action: 'read back', target: path.basename(probe), reason: 'got something else' });
    await unlink(probe);
    return { name: 'workspace', status: 'ok', detail: `writable: ${dir}` };
  } catch (err) {
    return {
      name: 'workspace',
      status: 'fail',
      detail: `${dir}: ${(err as Error).message}`,
      fix: `make ${dir} writable for this user (mkdir -p and chown), or point WORKSPACE_DIR elsewhere`,
    };
  }
}

/**
 * LLM_MODEL, then every other model the daemon may ask — LLM_MODEL_BALANCED (compaction,
 * consolidation, upkeep), the LLM_MODELS a chat can switch to and the LLM_FALLBACK models — each with one 1-token request on its own server, without fallback:
 * a fallback that does not answer is found here, not on the day the first model fails.
 */
export function modelsToCheck(config: Config): string[] {
  return uniqueNames(config.model, config.modelBalanced, ...config.models.map((m) => m.name), ...config.fallback);
}

async function checkLlm(config: Config, timeoutMs: number, llm: LlmClient, model: string): Promise<CheckResult> {
  const first = model === config.model;
  const name = first ? 'LLM' : `LLM ${model}`;
  const own = config.models.find((m) => m.name.toLowerCase() === model.toLowerCase());
  const where = own?.baseUrl ?? config.openaiBaseUrl ?? 'OpenAI';
  // Where the operator set what failed: the default server's settings, or the model's LLM_MODELS entry.
  const setting = own?.baseUrl ? `its LLM_MODELS entry (${model}=${own.baseUrl})` : 'OPENAI_BASE_URL';
  const named = first ? 'LLM_MODEL' : model === config.modelBalanced ? 'LLM_MODEL_BALANCED' : 'LLM_MODELS / LLM_FALLBACK';
  const started = Date.now();
  try {
    await llm.chat({ model, messages: [{ role: 'user', content: 'Reply with: ok' }], maxTokens: 1, retries: 0, timeoutMs, fallback: false });
    return { name, status: 'ok', detail: `${model} at ${where} answered in ${Date.now() - started} ms` };
  } catch (err) {
    const e = err instanceof LlmError ? err : undefined;
    // An odd 200 (no choice for a 1-token request) still proves the server and the key work.
    if (e?.code === 'llm.bad_response') return { name, status: 'ok', detail: `${model} at ${where} answered (with no choice) in ${Date.now() - started} ms` };
    let fix = `check ${setting} (${where}) and that the server is running`;
    if (e?.status === 401 || e?.status === 403) {
      // A model on its own server gets its own key, or none: OPENAI_API_KEY is never sent there.
      if (own?.keyVariable) fix = `the server refused the key — set a valid ${own.keyVariable}`;
      else if (own?.baseUrl) fix = `the server wants a key — write it as ${model}=${own.baseUrl}|KEY_VARIABLE in LLM_MODELS and set KEY_VARIABLE`;
      else fix = 'the server refused the key — set a valid OPENAI_API_KEY';
    } else if (e?.status === 404) fix = `the server does not know model ${model} or the path — check ${named} and ${setting} (most servers end in /v1)`;
    else if (e?.code === 'llm.timeout') fix = `no answer within ${timeoutMs} ms — check the server's load, or raise LLM_TIMEOUT_MS`;
    else if (e?.code === 'llm.rate_limited') fix = 'the server is rate limiting this key — wait, or check the plan/quota';
    return { name, status: 'fail', detail: scrubSecrets(`${where}: ${(err as Error).message}`), fix };
  }
}

async function checkLlms(config: Config, timeoutMs: number): Promise<CheckResult[]> {
  const llm = new LlmClient({ ...config, llmTimeoutMs: Math.min(config.llmTimeoutMs, timeoutMs) }, silentLogger());
  return Promise.all(modelsToCheck(config).map((model) => checkLlm(config, timeoutMs, llm, model)));
}

async function checkTelegram(token: string, apiRoot: string | undefined, timeoutMs: number): Promise<CheckResult> {
  try {
    const me = await getMe(telegramClient(token, apiRoot), timeoutMs);
    return { name: 'Telegram', status: 'ok', detail: `getMe: @${me.username} (id ${me.id})${apiRoot ? ` via ${apiRoot}` : ''}` };
  } catch (err) {
    return {
      name: 'Telegram',
      status: 'fail',
      detail: scrubSecrets(`getMe: ${(err as Error).message}`),
      fix: tokenRefused(err)
        ? 'Telegram refused the token — copy TELEGRAM_BOT_TOKEN again from @BotFather (/token)'
        : `cannot reach ${apiRoot ?? 'api.telegram.org'} — check the network, a proxy, or TELEGRAM_API_ROOT`,
    };
  }
}

function checkSqlite(): CheckResult[] {
  const require = createRequire(import.meta.url);
  type Db = { prepare(sql: string): { get(): Record<string, unknown> }; exec(sql: string): void; close(): void };
  let Database: new (file: string) => Db;
  try {
    Database = require('better-sqlite3') as typeof Database;
  } catch {
    return [{ name: 'SQLite', status: 'skip', detail: 'better-sqlite3 not installed: long-term memory index off' }];
  }
  let db: Db;
  const out: CheckResult[] = [];
  try {
    db = new Database(':memory:');
    const v = db.prepare('select sqlite_version() as v').get().v;
    db.exec('create virtual table doctor_fts using fts5(x)');
    out.push({ name: 'SQLite', status: 'ok', detail: `better-sqlite3 loads, SQLite ${String(v)} with FTS5` });
  } catch (err) {
    return [
      {
        name: 'SQLite',
        status: 'fail',
        detail: `better-sqlite3 does not load: ${(err as Error).message.split('\n')[0]}`,
        fix: 'rebuild the native module for this Node version: npm rebuild better-sqlite3',
      },
    ];
  }
  try {
    const vec = require('sqlite-vec') as { load(db: Db): void };
    try {
      vec.load(db);
      const v = db.prepare('select vec_version() as v').get().v;
      out.push({ name: 'sqlite-vec', status: 'ok', detail: `loads, ${String(v)}` });
    } catch (err) {
      out.push({
        name: 'sqlite-vec',
        status: 'warn',
        detail: `installed but does not load: ${(err as Error).message.split('\n')[0]} (vector search off; full-text search works)`,
        fix: 'reinstall it for this platform: npm install sqlite-vec (or leave EMBEDDINGS_MODEL unset)',
      });
    }
  } catch {
    out.push({ name: 'sqlite-vec', status: 'skip', detail: 'not installed: vector search off' });
  }
  db.close();
  return out;
}

/** Databases the daemon found damaged and set aside (storage/sqlite.ts): it runs on, with what they held missing. */
function checkSetAside(workspaceDir: string): CheckResult {
  const aside = setAsideCopies(workspaceDir);
  if (aside.length === 0) return { name: 'databases', status: 'ok', detail: 'no damaged database set aside' };
  return {
    name: 'databases',
    status: 'warn',
    detail: `set aside as damaged, an empty one started in their place: ${aside.join(', ')}`,
    fix: `inspect or recover from the copy (e.g. sqlite3 ${aside[0]} .recover), then delete it from ${workspaceDir}`,
  };
}

async function checkDisk(dir: string): Promise<CheckResult> {
  try {
    const st = await statfs(dir);
    const free = st.bavail * st.bsize;
    const text = free >= 10 * 1024 * MB ? `${(free / (1024 * MB)).toFixed(0)} GB` : `${(free / MB).toFixed(0)} MB`;
    if (free < 100 * MB)
      return {
        name: 'disk',
        status: 'fail',
        detail: `${text} free at ${dir}`,
        fix: 'free disk space: sessions and memory cannot be saved safely with less than 100 MB',
      };
    if (free < 1024 * MB) return { name: 'disk', status: 'warn', detail: `${text} free at ${dir}`, fix: 'free some disk space soon (less than 1 GB left)' };
    return { name: 'disk', status: 'ok', detail: `${text} free at ${dir}` };
  } catch (err) {
    return { name: 'disk', status: 'warn', detail: `could not measure free space: ${(err as Error).message}`, fix: 'check the workspace check above' };
  }
}

const MARK: Record<CheckStatus, string> = { ok: 'ok', warn: 'WARN', fail: 'FAIL', skip: 'skip' };

/** The table, then one "fix:" line per failed or warned check. */
export function formatReport(results: CheckResult[]): string {
  const w = Math.max(5, ...results.map((r) => r.name.length));
  const lines = [`${'check'.padEnd(w)}  status  detail`, `${'-'.repeat(w)}  ------  ------`];
  for (const r of results) lines.push(`${r.name.padEnd(w)}  ${MARK[r.status].padEnd(6)}  ${r.detail}`);
  const todo = results.filter((r) => r.fix && (r.status === 'fail' || r.status === 'warn'));
  if (todo.length > 0) {
    lines.push('');
    for (const r of todo) lines.push(`${r.status === 'fail' ? 'FIX' : 'fix'} ${r.name}: ${r.fix}`);
  }
  const failed = results.filter((r) => r.status === 'fail').length;
  lines.push('', failed === 0 ? 'All checks passed.' : `${failed} check(s) failed.`);
  return lines.join('\n');
}

export function exitCodeFor(results: CheckResult[]): number {
  return results.some((r) => r.status === 'fail') ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  answerHelp(
    process.argv.slice(2),
    [
      'usage: npm run doctor',
      '  checks what the bot needs, one row each: settings (.env), workspace writable, the LLM (one tiny request),',
      '  Telegram getMe (when TELEGRAM_BOT_TOKEN is set), PostgreSQL (when DATABASE_URL is set), SQLite and sqlite-vec,',
      '  disk space, the memory page link.',
      '  Exit 0 when all pass (warnings included), 1 when one fails, with the fix for each on one line.',
    ].join('\n'),
  );
  loadDotEnv();
  runDoctor().then(
    (results) => {
      process.stdout.write(`${formatReport(results)}\n`);
      process.exit(exitCodeFor(results));
    },
    (err: unknown) => {
      process.stderr.write(`doctor: ${scrubSecrets((err as Error).message)}\n`);
      process.exit(1);
    },
  );
}
