/**
 * `npm run setup` against the test LLM server (which checks the key) and the Bot API stand-in
 * (which keeps updates until they are confirmed, as Telegram does): non-interactively to a .env
 * on which the real daemon answers the owner; a wrong key, an unreachable server and a refused
 * token leave no .env; an existing .env keeps its other lines; on a terminal, secrets are typed
 * without echo. No secret ever reaches stdout or stderr.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import dotenv from 'dotenv';
import { runSetup } from '../../src/cli/setup.js';
import { childEnv, mainTs, repoRoot, spawnCollected, tsxLoader } from '../helpers/child.js';
import { echoResponder, startFakeLlm, type FakeLlm, type Responder } from '../helpers/fake-llm.js';
import { freePort, startTelegramEmulator, waitFor, type TelegramEmulator } from '../helpers/telegram.js';
import { tempDir } from '../helpers/workspace.js';

const KEY = 'sk-setup-test-key-7f3a9c41d2';
const OWNER = 4242;

/** An OpenAI-compatible server that wants KEY, lists two models and echoes. */
const keyed: Responder = (req, i) => {
  if (req.headers.authorization !== `Bearer ${KEY}`) return { status: 401, json: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } } };
  if (req.method === 'GET' && req.path.endsWith('/models')) return { json: { object: 'list', data: [{ id: 'fake-model', object: 'model' }, { id: 'other-model', object: 'model' }] } };
  if (!['fake-model', 'other-model', 'gpt-4o-mini'].includes(req.body?.model)) return { status: 404, json: { error: { message: `The model ${req.body?.model} does not exist`, type: 'invalid_request_error' } } };
  return echoResponder(req, i);
};

const start = (cmd: string, args: string[], env: Record<string, string>, cwd: string) => spawnCollected(cmd, args, { env: childEnv(env), cwd });

const npmSetup = (args: string[], env: Record<string, string>) => start('npm', ['run', '--silent', 'setup', '--', ...args], env, repoRoot);

async function withStandIns(fn: (ctx: { llm: FakeLlm; tg: TelegramEmulator; dir: string }) => Promise<void>): Promise<void> {
  const llm = await startFakeLlm(keyed);
  const tg = await startTelegramEmulator(undefined, { keepUntilConfirmed: true });
  const ws = await tempDir('membot-setup-');
  try {
    await fn({ llm, tg, dir: ws.dir });
  } finally {
    await tg.close();
    await llm.close();
    await ws.cleanup();
  }
}

test('npm run setup --yes: checks the LLM and the token, learns the owner from their message, writes .env (0600); the daemon on it answers the owner', () =>
  withStandIns(async ({ llm, tg, dir }) => {
    const envFile = path.join(dir, '.env');
    const setup = npmSetup(
      ['--yes', '--llm-url', llm.url, '--model', 'fake-model', '--api-root', tg.apiRoot, '--workspace', path.join(dir, 'workspace'), '--out', envFile, '--owner-wait', '60'],
      // The secrets come from the environment, as the usage recommends.
      { OPENAI_API_KEY: KEY, TELEGRAM_BOT_TOKEN: tg.token },
    );
    const owner = tg.user({ userId: OWNER, firstName: 'Ada', userName: 'ada_owner' });
    await waitFor(() => /Send any message to @TestNameBot/.test(setup.out()) || setup.err() !== '', 30_000, 'setup to wait for the owner');
    await owner.say('hi, I am the owner');
    assert.equal(await setup.exited, 0, setup.err());

    const said = setup.out() + setup.err();
    assert.ok(!said.includes(KEY) && !said.includes(tg.token), `no secret printed:\n${said}`);
    assert.equal(setup.err(), '');
    assert.match(setup.out(), /^LLM: ok — fake-model at http:\/\/127\.0\.0\.1:\d+\/v1 answered in \d+ ms$/m);
    assert.match(setup.out(), /^Telegram: ok — the token is @TestNameBot's/m);
    assert.match(setup.out(), /^Owner: Ada \(@ada_owner, id 4242\), added to TELEGRAM_ALLOWED_USERS\.$/m);
    assert.match(setup.out(), /^Done\. Start the bot with: npm start$/m);
    assert.match(setup.out(), /npx pm2 start ecosystem\.config\.cjs/);
    assert.deepEqual(tg.botMessages(OWNER).map((m) => m.text), ["Setup got your message: you are this bot's owner. I answer here once the bot runs (npm start)."]);

    assert.equal((await stat(envFile)).mode & 0o777, 0o600);
    const text = await readFile(envFile, 'utf8');
    const written = dotenv.parse(text);
    assert.equal(written.OPENAI_API_KEY, KEY);
    assert.equal(written.OPENAI_BASE_URL, llm.url);
    assert.equal(written.LLM_MODEL, 'fake-model');
    assert.equal(written.TELEGRAM_BOT_TOKEN, tg.token);
    assert.equal(written.TELEGRAM_API_ROOT, tg.apiRoot);
    assert.equal(written.TELEGRAM_ALLOWED_USERS, String(OWNER));
    assert.equal(written.WORKSPACE_DIR, path.join(dir, 'workspace'));
    assert.match(text, /^# Bot token from @BotFather/m, 'made from .env.example: the explanations are there');
    assert.equal(written.TZ, undefined, 'TZ stays the system zone');
    const checks = llm.requests.map((r) => `${r.method} ${r.path.replace(/^\/v1/, '')}`);
    assert.deepEqual(checks, ['GET /models', 'POST /chat/completions']);
    assert.equal(llm.requests[1]!.body.model, 'fake-model');
    assert.equal(llm.requests[1]!.body.max_tokens, 1);

    // The daemon, started where the .env is, with nothing else set: it answers the owner's
    // message (setup looked at it without taking it), then the next one.
    const daemon = start(process.execPath, ['--import', tsxLoader, mainTs], {}, dir);
    try {
      const answers = await tg.waitForBotMessages(OWNER, 2, 30_000).catch((err: Error) => assert.fail(`${err.message}\n${daemon.out()}\n${daemon.err()}`));
      assert.equal(answers[1]!.text, 'echo: hi, I am the owner');
      await owner.say('and now?');
      assert.equal((await tg.waitForBotMessages(OWNER, 3, 15_000))[2]!.text, 'echo: and now?');
      assert.ok(llm.chatRequests().slice(1).every((r) => r.body.model === 'fake-model' && r.headers.authorization === `Bearer ${KEY}`));
      assert.ok(!(daemon.out() + daemon.err()).includes(KEY), 'the daemon prints no key either');
    } finally {
      daemon.kill();
      await daemon.exited;
    }
  }));

test('setup asks for the owner\'s message only once the messages already waiting are known: one sent at once is taken, an older one is not', () =>
  withStandIns(async ({ llm, tg, dir }) => {
    await tg.user({ userId: 666001, firstName: 'Early' }).say('a message from before setup');
    // The first look at the waiting messages answers slowly: asking before it is done lets the owner's message be taken for an old one.
    tg.intercept('getUpdates', (call) => (call.index === 0 ? { delayMs: 1000 } : undefined));
    const setup = start(process.execPath, ['--import', tsxLoader, path.join(repoRoot, 'src/cli/setup.ts'), '--yes', '--llm-url', llm.url, '--model', 'fake-model', '--api-root', tg.apiRoot, '--out', path.join(dir, '.env'), '--owner-wait', '20'], { OPENAI_API_KEY: KEY, TELEGRAM_BOT_TOKEN: tg.token }, dir);
    await waitFor(() => /Send any message/.test(setup.out()) || setup.err() !== '', 20_000, 'the request for a message');
    const askedAt = Date.now();
    await tg.user({ userId: OWNER, firstName: 'Ada' }).say('me!');
    assert.equal(await setup.exited, 0, setup.err());
    const first = tg.callsOf('getUpdates')[0]!;
    assert.ok(askedAt >= first.at + 1000, `asked ${askedAt - first.at} ms after the first poll started, before it was answered`);
    assert.match(setup.out(), /^Owner: Ada \(@user4242, id 4242\)/m);
  }));

test('a wrong key, an unknown model, an unreachable server, a refused token: one line saying which, exit 1, no .env, no secret printed', () =>
  withStandIns(async ({ llm, tg, dir }) => {
    const envFile = path.join(dir, '.env');
    const base = ['--yes', '--out', envFile, '--owner', '1'];
    const closed = `http://127.0.0.1:${await freePort()}/v1`;
    const cases: Array<{ args: string[]; env: Record<string, string>; line: RegExp }> = [
      { args: ['--llm-url', llm.url], env: { OPENAI_API_KEY: 'sk-wrong-key-000000000' }, line: /^setup: key refused \(401\) by http:\/\/127\.0\.0\.1:\d+\/v1 — check the API key$/ },
      { args: ['--llm-url', llm.url, '--model', 'nope'], env: { OPENAI_API_KEY: KEY }, line: /^setup: http:\/\/127\.0\.0\.1:\d+\/v1 has no model "nope" \(404\) — it offers: fake-model, other-model$/ },
      { args: ['--llm-url', closed], env: { OPENAI_API_KEY: KEY }, line: new RegExp(`^setup: could not reach ${closed.replace(/[./]/g, '\\$&')} \\(connection refused\\) — check the URL`) },
      { args: ['--llm-url', llm.url, '--model', 'fake-model', '--bot-token', 'not-a-token'], env: { OPENAI_API_KEY: KEY }, line: /^setup: TELEGRAM_BOT_TOKEN does not look like a bot token/ },
      { args: ['--llm-url', llm.url, '--model', 'fake-model', '--api-root', tg.apiRoot], env: { OPENAI_API_KEY: KEY, TELEGRAM_BOT_TOKEN: '999:refused-token-abcdefgh' }, line: /^setup: Telegram refused the bot token \(401\) — copy it again from @BotFather/ },
    ];
    tg.intercept('getMe', () => ({ status: 401, json: { ok: false, error_code: 401, description: 'Unauthorized' } }));
    for (const c of cases) {
      const run = start(process.execPath, ['--import', tsxLoader, path.join(repoRoot, 'src/cli/setup.ts'), ...base, ...c.args], c.env, dir);
      assert.equal(await run.exited, 1, run.err());
      const lines = run.err().split('\n').filter(Boolean);
      assert.match(lines[0]!, c.line);
      assert.deepEqual(lines.slice(1), ['Nothing was written.']);
      assert.ok(!existsSync(envFile), 'no .env');
      for (const s of [KEY, 'sk-wrong-key-000000000', '999:refused-token-abcdefgh']) assert.ok(!(run.out() + run.err()).includes(s), `${s} not printed`);
    }
  }));

test('an existing .env: refused without --yes; with it, only the asked settings change, every other line stays', () =>
  withStandIns(async ({ llm, dir }) => {
    const envFile = path.join(dir, '.env');
    const before = `# my notes\nLOG_LEVEL=debug\nOPENAI_API_KEY=sk-old-key-1111111111\nTELEGRAM_ALLOWED_USERS=7\nMY_OWN_THING="kept as is"\n`;
    await writeFile(envFile, before, { mode: 0o644 });
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(`ERR ${l}`) };
    const args = ['--out', envFile, '--llm-url', llm.url, '--model', 'other-model', '--bot-token', '123:abcdefghijklmnop', '--no-telegram'];
    assert.equal(await runSetup({ argv: args.filter((a) => a !== '--bot-token' && a !== '123:abcdefghijklmnop'), env: { OPENAI_API_KEY: KEY }, cwd: dir, io }), 2);
    assert.match(lines[0]!, /^ERR setup: .*\.env exists — pass --yes to update it/);
    assert.equal(await readFile(envFile, 'utf8'), before, 'untouched');

    lines.length = 0;
    const code = await runSetup({ argv: ['--yes', '--out', envFile, '--llm-url', llm.url, '--model', 'other-model', '--no-telegram'], env: { OPENAI_API_KEY: KEY }, cwd: dir, io });
    assert.equal(code, 0, lines.join('\n'));
    assert.equal(
      await readFile(envFile, 'utf8'),
      `# my notes\nLOG_LEVEL=debug\nOPENAI_API_KEY=${KEY}\nTELEGRAM_ALLOWED_USERS=7\nMY_OWN_THING="kept as is"\nOPENAI_BASE_URL=${llm.url}\nLLM_MODEL=other-model\nTELEGRAM_BOT_TOKEN=\n`,
    );
    assert.equal((await stat(envFile)).mode & 0o777, 0o600, 'tightened to 0600');
    assert.match(lines.join('\n'), /It is a chat in this terminal/);
    assert.ok(!lines.join('\n').includes(KEY));
  }));

test('on a terminal: the questions, the key and the token typed without echo, the default model taken from the server', () =>
  withStandIns(async ({ llm, tg, dir }) => {
    const envFile = path.join(dir, '.env');
    const cmd = [process.execPath, '--import', tsxLoader, path.join(repoRoot, 'src/cli/setup.ts'), '--out', envFile, '--api-root', tg.apiRoot, '--owner', '@ada_owner'].map((a) => `'${a}'`).join(' ');
    const run = start('script', ['-qfec', cmd, '/dev/null'], { TERM: 'dumb' }, dir);
    const answer = async (prompt: RegExp, text: string) => {
      await waitFor(() => prompt.test(run.out()), 20_000, `the prompt ${prompt}: ${run.out()}`);
      run.write(`${text}\r`);
    };
    try {
      await answer(/Base URL \(Enter: OpenAI\): $/, llm.url);
      await answer(/API key, typed unseen \(Enter: none, for a local server\): $/, KEY);
      // The server lists no gpt-4o-mini: its first model is offered, and Enter takes it.
      await answer(/Model \[fake-model\]: $/, '');
      await answer(/Bot token, typed unseen: $/, tg.token);
      assert.equal(await run.exited, 0, run.out());
    } finally {
      run.kill();
    }
    const screen = run.out();
    assert.ok(!screen.includes(KEY), `the key is not on the screen:\n${screen}`);
    assert.ok(!screen.includes(tg.token), 'nor the token');
    assert.match(screen, /offers 2 model\(s\): fake-model, other-model/);
    assert.match(screen, /open @BotFather in Telegram, send \/newbot/);
    assert.match(screen, /Done\. Start the bot with: npm start/);
    const written = dotenv.parse(await readFile(envFile, 'utf8'));
    assert.equal(written.OPENAI_API_KEY, KEY);
    assert.equal(written.TELEGRAM_BOT_TOKEN, tg.token);
    assert.equal(written.LLM_MODEL, 'fake-model');
    assert.equal(written.TELEGRAM_ALLOWED_USERS, '@ada_owner');
  }));
