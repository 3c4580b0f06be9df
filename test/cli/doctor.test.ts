import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { exitCodeFor, formatReport, runDoctor } from '../../src/cli/doctor.js';
import { freePort, startTelegramEmulator } from '../helpers/telegram.js';
import { completion, startFakeLlm } from '../helpers/fake-llm.js';
import { tempDir } from '../helpers/workspace.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

test('doctor: everything reachable → every check ok (or skipped), one tiny LLM request, Telegram getMe', async () => {
  const tg = await startTelegramEmulator();
  const llm = await startFakeLlm();
  const ws = await tempDir();
  try {
    const env = { OPENAI_BASE_URL: llm.url, WORKSPACE_DIR: ws.dir, TZ: 'UTC', TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: tg.apiRoot };
    const results = await runDoctor({ env, cwd: ws.dir });
    assert.deepEqual(
      results.map((r) => r.name),
      ['config', 'workspace', 'LLM', 'Telegram', 'SQLite', 'sqlite-vec', 'databases', 'disk'],
    );
    for (const r of results)
      assert.ok(r.status === 'ok' || r.status === 'skip' || (r.name === 'disk' && r.status === 'warn'), `${r.name}: ${r.status} ${r.detail}`);
    assert.equal(results.find((r) => r.name === 'Telegram')!.detail.startsWith('getMe: @TestNameBot'), true);
    assert.equal(llm.chatRequests().length, 1);
    assert.equal(llm.chatRequests()[0]!.body.max_tokens, 1, 'a tiny request');
    assert.equal(exitCodeFor(results), 0);
    const report = formatReport(results);
    assert.match(report, /^check +status +detail$/m);
    assert.match(report, /All checks passed\./);
  } finally {
    await llm.close();
    await tg.close();
    await ws.cleanup();
  }
});

test('doctor asks every model the daemon may use: LLM_MODELS on their own servers and LLM_FALLBACK, each once; a dead one fails with its own fix', async () => {
  // The default server knows gpt-a and gpt-fb; "gpt-gone" it does not (404, as OpenAI answers).
  const main = await startFakeLlm((req) =>
    req.body?.model === 'gpt-gone'
      ? { status: 404, json: { error: { message: 'The model `gpt-gone` does not exist', type: 'invalid_request_error' } } }
      : { json: completion('ok', undefined, String(req.body?.model)) },
  );
  // A server that wants a key: gpt-nokey is listed on it without one.
  const other = await startFakeLlm((req) =>
    req.headers.authorization === 'Bearer sk-other-secret-0123456789'
      ? { json: completion('ok', undefined, String(req.body?.model)) }
      : { status: 401, json: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } } },
  );
  const ws = await tempDir();
  try {
    const deadPort = await freePort();
    const env = {
      OPENAI_BASE_URL: main.url,
      LLM_MODEL: 'gpt-a',
      LLM_MODEL_BALANCED: 'gpt-bal',
      LLM_MODELS: `gpt-a,gpt-own=${other.url}|OTHER_KEY,gpt-dead=http://127.0.0.1:${deadPort}/v1,gpt-nokey=${other.url}`,
      OTHER_KEY: 'sk-other-secret-0123456789',
      LLM_FALLBACK: 'gpt-fb,gpt-gone,gpt-own',
      WORKSPACE_DIR: ws.dir,
      TZ: 'UTC',
    };
    const results = await runDoctor({ env, cwd: ws.dir, timeoutMs: 5000 });
    const by = Object.fromEntries(results.map((r) => [r.name, r]));
    assert.deepEqual(
      results.filter((r) => r.name.startsWith('LLM')).map((r) => `${r.name} ${r.status}`),
      ['LLM ok', 'LLM gpt-bal ok', 'LLM gpt-own ok', 'LLM gpt-dead fail', 'LLM gpt-nokey fail', 'LLM gpt-fb ok', 'LLM gpt-gone fail'],
    );
    assert.deepEqual(
      main
        .chatRequests()
        .map((r) => r.body.model)
        .sort(),
      ['gpt-a', 'gpt-bal', 'gpt-fb', 'gpt-gone'],
      'each model on the default server asked once, no fallback',
    );
    assert.deepEqual(
      other
        .chatRequests()
        .map((r) => r.body.model)
        .sort(),
      ['gpt-nokey', 'gpt-own'],
      'the others on their own server, once each',
    );
    assert.match(
      by['LLM gpt-nokey']!.fix!,
      /gpt-nokey=http:\/\/127\.0\.0\.1:\d+\/v1\|KEY_VARIABLE in LLM_MODELS/,
      'OPENAI_API_KEY is never sent there: its entry needs a key',
    );
    assert.match(by['LLM gpt-dead']!.fix!, new RegExp(`LLM_MODELS entry \\(gpt-dead=http://127\\.0\\.0\\.1:${deadPort}/v1\\)`));
    assert.match(by['LLM gpt-gone']!.fix!, /does not know model gpt-gone .*LLM_MODELS \/ LLM_FALLBACK and OPENAI_BASE_URL/);
    assert.equal(exitCodeFor(results), 1);
  } finally {
    await main.close();
    await other.close();
    await ws.cleanup();
  }
});

test('doctor: a dead LLM, a refused token and a bad setting each fail with a one-line fix; exit non-zero', async () => {
  const tg = await startTelegramEmulator();
  tg.intercept('getMe', () => ({ status: 401, json: { ok: false, error_code: 401, description: 'Unauthorized' } }));
  const ws = await tempDir();
  try {
    const deadPort = await freePort();
    const env = {
      OPENAI_BASE_URL: `http://127.0.0.1:${deadPort}/v1`,
      WORKSPACE_DIR: ws.dir,
      TZ: 'UTC',
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.apiRoot,
      TELEGRAM_DM_POLICY: 'strangers-welcome',
    };
    const results = await runDoctor({ env, cwd: ws.dir, timeoutMs: 5000 });
    const by = Object.fromEntries(results.map((r) => [r.name, r]));
    assert.equal(by.config!.status, 'fail');
    assert.match(by.config!.fix!, /^TELEGRAM_DM_POLICY/);
    assert.equal(by.LLM!.status, 'fail');
    assert.match(by.LLM!.fix!, /OPENAI_BASE_URL/);
    assert.equal(by.Telegram!.status, 'fail');
    assert.match(by.Telegram!.fix!, /@BotFather/);
    assert.ok(!JSON.stringify(results).includes(tg.token), 'the token is not printed');
    assert.equal(by.workspace!.status, 'ok');
    assert.equal(exitCodeFor(results), 1);
    const report = formatReport(results);
    for (const name of ['config', 'LLM', 'Telegram']) assert.match(report, new RegExp(`^FIX ${name}: .+$`, 'm'));
    assert.match(report, /3 check\(s\) failed\./);
  } finally {
    await tg.close();
    await ws.cleanup();
  }
});

test('`npm run doctor` entry point prints the table and exits 1 when something is wrong', async () => {
  const ws = await tempDir();
  try {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? ws.dir, WORKSPACE_DIR: ws.dir, TZ: 'UTC' };
    const child = spawn(process.execPath, ['--import', tsxLoader, path.join(repoRoot, 'src/cli/doctor.ts')], { cwd: ws.dir, env });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 1, out);
    assert.match(out, /^config +FAIL +.*OPENAI_API_KEY/m);
    assert.match(out, /^workspace +ok/m);
    assert.match(out, /^FIX config: OPENAI_API_KEY is not set/m);
  } finally {
    await ws.cleanup();
  }
});
