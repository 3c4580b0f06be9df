import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig as readConfig } from '../../src/config/env.js';
import { CHANNELS } from '../../src/app/channels.js';
import { loadTelegramConfig } from '../../src/channels/telegram/settings.js';

/** The settings as main reads them: with the channels' own sections. */
const loadConfig = (env: Record<string, string | undefined>, cwd?: string, channels = CHANNELS) => readConfig(env, cwd, channels);
import { exitCodeFor, runDoctor } from '../../src/cli/doctor.js';
import { tempDir } from '../helpers/workspace.js';
import { patient } from '../helpers/wait.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

const KEY = { OPENAI_API_KEY: 'sk-test-key-123456' };

test('defaults: only a key set gives the documented values and no problems', () => {
  const cwd = '/srv/bot';
  const { config, problems } = loadConfig({ ...KEY, TZ: 'UTC' }, cwd);
  assert.deepEqual(problems, []);
  assert.deepEqual(config, {
    openaiApiKey: 'sk-test-key-123456',
    openaiBaseUrl: undefined,
    model: 'gpt-4o-mini',
    modelBalanced: 'gpt-4o-mini',
    vision: undefined,
    models: [],
    fallback: [],
    llmTimeoutMs: 60_000,
    llmMaxRetries: 2,
    maxToolIterations: 8,
    toolTimeoutMs: 30_000,
    maxConcurrentTurns: 8,
    workspaceDir: path.join(cwd, 'workspace'),
    database: { url: undefined, poolSize: 10, leaseMs: 15_000 },
    logLevel: 'info',
    logFile: undefined,
    timezone: 'UTC',
    consoleChatId: 'local',
    shutdownTimeoutMs: 20_000,
    memoryScope: 'chat',
    consolidationTimeoutMs: 30_000,
    maxMemorySize: 8192,
    summaryTimeoutMs: 15_000,
    embeddingsModel: undefined,
    embeddingsDimensions: 256,
    maxMessageChars: 20_000,
    dailyTokenBudget: undefined,
    budgetExemptUsers: { telegram: [], console: [] },
    turnTimeoutMs: 120_000,
    rateLimitPerMinute: 20,
    maxQueuedPerChat: 10,
    albumWaitMs: 1200,
    remindersPerChatPerHour: 10,
    transcriptionTimeoutMs: 60_000,
    memoryPagePort: 0,
    memoryPageHost: '127.0.0.1',
    memoryPageToken: undefined,
    memoryPageOrigins: [],
    transcriptionModel: 'whisper-1',
    showTranscript: false,
    streaming: 'draft',
    groupAdminsManage: false,
    channels: {
      telegram: loadTelegramConfig({}).telegram, // its defaults: test/channels/telegram/config.test.ts
      console: { configured: true, secrets: [], owners: [] },
    },
    mcp: { file: undefined, servers: [], secrets: [] },
  });
});

test('LLM_VISION: unset goes by the catalogue, true/false override it, anything else is one problem line', () => {
  assert.equal(loadConfig({ ...KEY, TZ: 'UTC', LLM_VISION: 'true' }).config.vision, true);
  assert.equal(loadConfig({ ...KEY, TZ: 'UTC', LLM_VISION: 'off' }).config.vision, false);
  const bad = loadConfig({ ...KEY, TZ: 'UTC', LLM_VISION: 'sometimes' });
  assert.equal(bad.config.vision, undefined);
  assert.deepEqual(bad.problems, [
    'LLM_VISION="sometimes" must be true (the model reads images) or false (text only) — or remove it to go by src/llm/models.json',
  ]);
});

test('DAILY_TOKEN_BUDGET: a whole number of tokens (0 = off); the allowed users are exempt unless DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS=false', () => {
  const on = loadConfig({ ...KEY, TZ: 'UTC', DAILY_TOKEN_BUDGET: '50000', TELEGRAM_ALLOWED_USERS: '42,@Owner' });
  assert.deepEqual(on.problems, []);
  assert.equal(on.config.dailyTokenBudget, 50_000);
  assert.deepEqual(on.config.budgetExemptUsers, { telegram: ['42', 'owner'], console: [] }, "each channel's owners, on their channel");
  const strict = loadConfig({ ...KEY, TZ: 'UTC', DAILY_TOKEN_BUDGET: '50000', TELEGRAM_ALLOWED_USERS: '42', DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS: 'false' });
  assert.deepEqual(strict.config.budgetExemptUsers, {});
  assert.equal(loadConfig({ ...KEY, TZ: 'UTC', DAILY_TOKEN_BUDGET: '0' }).config.dailyTokenBudget, undefined);
  const bad = loadConfig({ ...KEY, TZ: 'UTC', DAILY_TOKEN_BUDGET: '10k', DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS: 'maybe' });
  assert.equal(bad.problems.length, 2, bad.problems.join('\n'));
  assert.match(bad.problems[0]!, /^DAILY_TOKEN_BUDGET="10k" is not a whole number/);
  assert.match(bad.problems[1]!, /^DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS="maybe" must be true/);
});

test('without TZ the system time zone is used; set values are read, trimmed and normalised', () => {
  const noTz = loadConfig({ ...KEY }, '/srv/bot');
  assert.deepEqual(noTz.problems, []);
  assert.equal(noTz.config.timezone, Intl.DateTimeFormat().resolvedOptions().timeZone);

  const { config, problems } = loadConfig(
    {
      ...KEY,
      LLM_MODEL: 'gpt-4.1',
      LLM_TIMEOUT_MS: ' 1500 ',
      MAX_TOOL_ITERATIONS: '1',
      LOG_LEVEL: 'DEBUG',
      MEMORY_SCOPE: 'Global',
      WORKSPACE_DIR: 'data/ws',
      TZ: 'Europe/Berlin',
      CONSOLE_CHAT_ID: 'me',
      LLM_MAX_RETRIES: '',
    },
    '/srv/bot',
  );
  assert.deepEqual(problems, []);
  assert.equal(config.model, 'gpt-4.1');
  assert.equal(config.modelBalanced, 'gpt-4.1', 'the balanced model follows LLM_MODEL');
  assert.equal(config.llmTimeoutMs, 1500);
  assert.equal(config.maxToolIterations, 1);
  assert.equal(config.llmMaxRetries, 2, 'an empty value means the default');
  assert.equal(config.logLevel, 'debug');
  assert.equal(config.memoryScope, 'global');
  assert.equal(config.workspaceDir, '/srv/bot/data/ws');
  assert.equal(config.timezone, 'Europe/Berlin');
  assert.equal(config.consoleChatId, 'me');
});

function assertOneProblem(env: Record<string, string>, variable: string): string {
  const { problems } = loadConfig({ ...KEY, TZ: 'UTC', ...env }, '/srv/bot');
  assert.equal(problems.length, 1, `${JSON.stringify(env)} → ${JSON.stringify(problems)}`);
  const line = problems[0]!;
  assert.ok(line.includes(variable), `the problem names ${variable}: ${line}`);
  assert.ok(!line.includes('\n'), `one line: ${line}`);
  return line;
}

test('a bad whole number gives one problem line naming the variable, and the default is kept', () => {
  const cases: Array<[string, string]> = [
    ['LLM_TIMEOUT_MS', 'abc'],
    ['LLM_TIMEOUT_MS', '1.5'],
    ['LLM_TIMEOUT_MS', '99'],
    ['LLM_MAX_RETRIES', '-1'],
    ['LLM_MAX_RETRIES', '11'],
    ['MAX_TOOL_ITERATIONS', '0'],
    ['TOOL_TIMEOUT_MS', 'ten'],
    ['MAX_CONCURRENT_TURNS', '1e9'],
    ['SHUTDOWN_TIMEOUT_MS', '20s'],
    ['TURN_TIMEOUT_MS', '500'],
    ['TURN_TIMEOUT_MS', '2 minutes'],
    ['RATE_LIMIT_PER_MINUTE', '-1'],
    ['RATE_LIMIT_PER_MINUTE', 'many'],
    ['MAX_QUEUED_PER_CHAT', '0'],
  ];
  for (const [name, value] of cases) {
    const line = assertOneProblem({ [name]: value }, name);
    assert.ok(line.includes(value), `the bad value is shown: ${line}`);
  }
  const { config } = loadConfig({ ...KEY, TZ: 'UTC', MAX_TOOL_ITERATIONS: '0', LLM_TIMEOUT_MS: 'abc' });
  assert.equal(config.maxToolIterations, 8);
  assert.equal(config.llmTimeoutMs, 60_000);

  // Several bad values: one line each.
  const many = loadConfig({ ...KEY, TZ: 'UTC', LLM_TIMEOUT_MS: 'x', MAX_CONCURRENT_TURNS: '0', LOG_LEVEL: 'loud' });
  assert.equal(many.problems.length, 3);
});

test('TRANSCRIPTION_TIMEOUT_MS: half the turn by default (at most 60 s); one at or past TURN_TIMEOUT_MS is a problem (a note is transcribed inside its turn)', () => {
  assert.equal(loadConfig({ ...KEY, TURN_TIMEOUT_MS: '30000' }).config.transcriptionTimeoutMs, 15_000);
  assert.equal(loadConfig({ ...KEY, TRANSCRIPTION_TIMEOUT_MS: '5000' }).config.transcriptionTimeoutMs, 5000);
  const line = assertOneProblem({ TURN_TIMEOUT_MS: '30000', TRANSCRIPTION_TIMEOUT_MS: '30000' }, 'TRANSCRIPTION_TIMEOUT_MS');
  assert.match(line, /not shorter than TURN_TIMEOUT_MS=30000/);
  assertOneProblem({ REMINDERS_PER_CHAT_PER_HOUR: '0' }, 'REMINDERS_PER_CHAT_PER_HOUR');
});

test('bad TZ, LOG_LEVEL, MEMORY_SCOPE and OPENAI_BASE_URL each give one problem line naming the variable', () => {
  assertOneProblem({ TZ: 'Mars/Olympus_Mons' }, 'TZ');
  assertOneProblem({ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL');
  assertOneProblem({ MEMORY_SCOPE: 'team' }, 'MEMORY_SCOPE');
  for (const url of ['not a url', 'ftp://example.com/v1', 'localhost:11434/v1', 'file:///etc/passwd']) {
    assertOneProblem({ OPENAI_BASE_URL: url }, 'OPENAI_BASE_URL');
  }
});

test('no key and no base URL is one problem naming OPENAI_API_KEY', () => {
  const { problems, config } = loadConfig({ TZ: 'UTC' }, '/srv/bot');
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /OPENAI_API_KEY/);
  assert.ok(!problems[0]!.includes('\n'));
  assert.equal(config.openaiApiKey, '');
  // Blank counts as not set.
  assert.equal(loadConfig({ TZ: 'UTC', OPENAI_API_KEY: '   ' }).problems.length, 1);
});

test('a base URL without a key is fine: a placeholder key is used', () => {
  const { problems, config } = loadConfig({ TZ: 'UTC', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }, '/srv/bot');
  assert.deepEqual(problems, []);
  assert.equal(config.openaiBaseUrl, 'http://127.0.0.1:11434/v1');
  assert.equal(typeof config.openaiApiKey, 'string');
  assert.ok(config.openaiApiKey.length > 0, 'the SDK gets a non-empty key');

  // A real key given alongside the URL is used as is.
  const both = loadConfig({ TZ: 'UTC', ...KEY, OPENAI_BASE_URL: 'https://openrouter.ai/api/v1' });
  assert.deepEqual(both.problems, []);
  assert.equal(both.config.openaiApiKey, KEY.OPENAI_API_KEY);
});

const BOT_TOKEN = '123456789:AAtest-token-for-the-emulator_0001';

test("risk: global scope with groups or strangers shares the owner's memory — the combination is refused in one line saying what to set", () => {
  const refused: Array<Record<string, string>> = [
    { TELEGRAM_DM_POLICY: 'allowlist', TELEGRAM_ALLOWED_USERS: '42', TELEGRAM_ALLOWED_GROUPS: '-1001234567890' },
    { TELEGRAM_ALLOWED_USERS: '42' }, // pairing, the default: strangers can be approved in
    { TELEGRAM_DM_POLICY: 'open' },
  ];
  for (const env of refused) {
    const line = assertOneProblem({ MEMORY_SCOPE: 'global', TELEGRAM_BOT_TOKEN: BOT_TOKEN, ...env }, 'MEMORY_SCOPE=global');
    assert.match(line, /MEMORY_SCOPE=chat/, `says what to set: ${line}`);
    if (env.TELEGRAM_ALLOWED_GROUPS) assert.match(line, /TELEGRAM_ALLOWED_GROUPS/, line);
    else assert.match(line, /TELEGRAM_DM_POLICY=allowlist/, line);
  }
  // A single-owner bot: global with only listed users in private chats is accepted; so is the terminal.
  const owner = loadConfig({
    ...KEY,
    TZ: 'UTC',
    MEMORY_SCOPE: 'global',
    TELEGRAM_BOT_TOKEN: BOT_TOKEN,
    TELEGRAM_DM_POLICY: 'allowlist',
    TELEGRAM_ALLOWED_USERS: '42',
  });
  assert.deepEqual(owner.problems, []);
  assert.deepEqual(loadConfig({ ...KEY, TZ: 'UTC', MEMORY_SCOPE: 'global' }).problems, []);
  // Per-chat memory takes groups and strangers as before.
  assert.deepEqual(
    loadConfig({ ...KEY, TZ: 'UTC', TELEGRAM_BOT_TOKEN: BOT_TOKEN, TELEGRAM_ALLOWED_GROUPS: '-1001234567890', TELEGRAM_DM_POLICY: 'open' }).problems,
    [],
  );
});

test("risk: global scope with groups shares the owner's memory — the daemon exits 2 before starting, and doctor says the same", {
  timeout: patient(30_000),
}, async () => {
  const ws = await tempDir();
  try {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      WORKSPACE_DIR: ws.dir,
      TZ: 'UTC',
      LOG_LEVEL: 'silent',
      MEMORY_SCOPE: 'global',
      TELEGRAM_BOT_TOKEN: BOT_TOKEN,
      TELEGRAM_API_ROOT: 'http://127.0.0.1:9',
      TELEGRAM_ALLOWED_USERS: '42',
      TELEGRAM_DM_POLICY: 'allowlist',
      TELEGRAM_ALLOWED_GROUPS: '-1001234567890',
    };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: REPO, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), patient(20_000));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearTimeout(timer);
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    const lines = stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0]!, /MEMORY_SCOPE=global/);
    assert.match(lines[0]!, /TELEGRAM_ALLOWED_GROUPS/);
    assert.deepEqual(await readdir(ws.dir), [], 'nothing started before the check');

    const results = await runDoctor({ env, cwd: ws.dir, timeoutMs: 2000 });
    const config = results.find((r) => r.name === 'config')!;
    assert.equal(config.status, 'fail');
    assert.equal(config.fix, lines[0]!.replace(/^config: /, ''));
    assert.equal(exitCodeFor(results), 1);
  } finally {
    await ws.cleanup();
  }
});
