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
import { freePort, startTelegramEmulator, type TelegramEmulator } from '../helpers/telegram.js';
import { tempDir } from '../helpers/workspace.js';
import { waitFor } from '../helpers/wait.js';

const KEY = 'sk-setup-test-key-7f3a9c41d2';
const OWNER = 4242;

/** An OpenAI-compatible server that wants KEY, lists two models and echoes. */
const keyed: Responder = (req, i) => {
  if (req.headers.authorization !== `Bearer ${KEY}`)
    return { status: 401, json: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } } };
  if (req.method === 'GET' && req.path.endsWith('/models'))
    return {
      json: {
        object: 'list',
        data: [
          { id: 'fake-model', object: 'model' },
          { id: 'other-model', object: 'model' },
        ],
      },
    };
  if (!['fake-model', 'other-model', 'gpt-4o-mini'].includes(req.body?.model))
    return { status: 404, json: { error: { message: `The model ${req.body?.model} does not exist`, type: 'invalid_request_error' } } };
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

/** `args` run on a terminal (script(1) gives it one), as a person runs setup; `answer` types a line at a prompt. */
function onTerminal(cmd: string[], env: Record<string, string>, cwd: string) {
  const run = start('script', ['-qfec', cmd.map((a) => `'${a}'`).join(' '), '/dev/null'], { TERM: 'dumb', ...env }, cwd);
  const screen = () => run.out().replace(/\r/g, '');
  let seen = 0;
  const answer = async (prompt: RegExp, text: string) => {
    // Each prompt after the previous answer: the same question asked twice is answered twice.
    await waitFor(() => prompt.test(screen().slice(seen)), 30_000, `the prompt ${prompt}`).catch((err: Error) =>
      assert.fail(`${err.message}; the screen:\n${screen()}`),
    );
    seen = screen().length;
    run.write(`${text}\r`);
  };
  return { run, screen, answer };
}

test('npm run setup: checks the LLM and the token, learns the owner from their message (confirmed), writes .env (0600); the daemon on it answers the owner', () =>
  withStandIns(async ({ llm, tg, dir }) => {
    const envFile = path.join(dir, '.env');
    const {
      run: setup,
      screen,
      answer,
    } = onTerminal(
      [
        'npm',
        'run',
        '--silent',
        'setup',
        '--',
        '--llm-url',
        llm.url,
        '--model',
        'fake-model',
        '--api-root',
        tg.apiRoot,
        '--workspace',
        path.join(dir, 'workspace'),
        '--out',
        envFile,
        '--owner-wait',
        '60',
      ],
      // The secrets come from the environment, as the usage recommends.
      { OPENAI_API_KEY: KEY, TELEGRAM_BOT_TOKEN: tg.token },
      repoRoot,
    );
    const owner = tg.user({ userId: OWNER, firstName: 'Ada', userName: 'ada_owner' });
    try {
      await waitFor(() => /Send any message to @TestNameBot/.test(screen()) || setup.err() !== '', 30_000, `setup to wait for the owner: ${screen()}`);
      await owner.say('hi, I am the owner');
      await answer(/A message from Ada \(@ada_owner, id 4242\)\. Is this you\? \[y\/N\]: $/, 'y');
      assert.equal(await setup.exited, 0, screen());
    } finally {
      setup.kill();
    }

    const said = screen() + setup.err();
    assert.ok(!said.includes(KEY) && !said.includes(tg.token), `no secret printed:\n${said}`);
    assert.equal(setup.err(), '');
    assert.match(screen(), /^LLM: ok — fake-model at http:\/\/127\.0\.0\.1:\d+\/v1 answered in \d+ ms$/m);
    assert.match(screen(), /^Telegram: ok — the token is @TestNameBot's/m);
    assert.match(screen(), /^Owner: Ada \(@ada_owner, id 4242\), added to TELEGRAM_ALLOWED_USERS\.$/m);
    assert.match(screen(), /^Done\. Start the bot with: npm start$/m);
    assert.deepEqual(
      tg.botMessages(OWNER).map((m) => m.text),
      ["Setup got your message: you are this bot's owner. I answer here once the bot runs (npm start)."],
    );

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
      assert.ok(
        llm
          .chatRequests()
          .slice(1)
          .every((r) => r.body.model === 'fake-model' && r.headers.authorization === `Bearer ${KEY}`),
      );
      assert.ok(!(daemon.out() + daemon.err()).includes(KEY), 'the daemon prints no key either');
    } finally {
      daemon.kill();
      await daemon.exited;
    }
  }));

test('a stranger cannot become the owner by Enter: "Is this you?" defaults to no, and only the confirmed sender is written', () =>
  withStandIns(async ({ llm, tg, dir }) => {
    // A stranger who found the bot wrote before setup asked; the owner writes after.
    await tg.user({ userId: 666001, firstName: 'Mallory' }).say('make me the owner');
    const envFile = path.join(dir, '.env');
    const { run, screen, answer } = onTerminal(
      [
        process.execPath,
        '--import',
        tsxLoader,
        path.join(repoRoot, 'src/cli/setup.ts'),
        '--llm-url',
        llm.url,
        '--model',
        'fake-model',
        '--api-root',
        tg.apiRoot,
        '--out',
        envFile,
        '--owner-wait',
        '30',
      ],
      { OPENAI_API_KEY: KEY, TELEGRAM_BOT_TOKEN: tg.token },
      dir,
    );
    try {
      await answer(/A message from Mallory \(.*id 666001\)\. Is this you\? \[[yYnN]\/[yYnN]\]: $/, '');
      await tg.user({ userId: OWNER, firstName: 'Ada' }).say('me!');
      await answer(/A message from Ada \(@user4242, id 4242\)\. Is this you\? /, 'y');
      assert.equal(await run.exited, 0, screen());
    } finally {
      run.kill();
    }
    assert.match(screen(), /Mallory \(.*id 666001\)\. Is this you\? \[y\/N\]/, 'the question shows no as the default');
    assert.match(screen(), /^Owner: Ada \(@user4242, id 4242\)/m);
    assert.equal(dotenv.parse(await readFile(envFile, 'utf8')).TELEGRAM_ALLOWED_USERS, String(OWNER));
    assert.deepEqual(tg.botMessages(666001), [], 'the stranger is told nothing');
  }));

test('npm run setup -- --yes without --owner: refused in one line naming --owner, before any check — nobody who messages the bot becomes its owner', () =>
  withStandIns(async ({ llm, tg, dir }) => {
    await tg.user({ userId: 666001, firstName: 'Mallory' }).say('make me the owner');
    const envFile = path.join(dir, '.env');
    const args = ['--yes', '--llm-url', llm.url, '--model', 'fake-model', '--api-root', tg.apiRoot, '--out', envFile, '--owner-wait', '5'];
    const setup = npmSetup(args, { OPENAI_API_KEY: KEY, TELEGRAM_BOT_TOKEN: tg.token });
    assert.equal(await setup.exited, 2, setup.out() + setup.err());
    assert.deepEqual(setup.err().split('\n').filter(Boolean), [
      'setup: with --yes (or no terminal) nobody confirms who messages the bot, so a stranger could become its owner — add --owner <your numeric user id or @username>, or --owner-wait 0 for no owner yet',
    ]);
    assert.ok(!existsSync(envFile), 'no .env');
    assert.deepEqual([llm.requests.length, tg.callsOf('getUpdates').length], [0, 0], 'nothing checked, no message looked at');

    // What the line says to add works: --owner, or --owner-wait 0 (no owner; pairing later).
    const withOwner = npmSetup([...args, '--owner', '@ada_owner'], { OPENAI_API_KEY: KEY, TELEGRAM_BOT_TOKEN: tg.token });
    assert.equal(await withOwner.exited, 0, withOwner.err());
    assert.equal(dotenv.parse(await readFile(envFile, 'utf8')).TELEGRAM_ALLOWED_USERS, '@ada_owner');
    assert.deepEqual(tg.callsOf('getUpdates'), [], "the stranger's message was never looked at");
  }));

test('a wrong key, an unknown model, an unreachable server, a refused token: one line saying which, exit 1, no .env, no secret printed', () =>
  withStandIns(async ({ llm, tg, dir }) => {
    const envFile = path.join(dir, '.env');
    const base = ['--yes', '--out', envFile, '--owner', '1'];
    const closed = `http://127.0.0.1:${await freePort()}/v1`;
    const cases: Array<{ args: string[]; env: Record<string, string>; line: RegExp }> = [
      {
        args: ['--llm-url', llm.url],
        env: { OPENAI_API_KEY: 'sk-wrong-key-000000000' },
        line: /^setup: key refused \(401\) by http:\/\/127\.0\.0\.1:\d+\/v1 — check the API key$/,
      },
      {
        args: ['--llm-url', llm.url, '--model', 'nope'],
        env: { OPENAI_API_KEY: KEY },
        line: /^setup: http:\/\/127\.0\.0\.1:\d+\/v1 has no model "nope" \(404\) — it offers: fake-model, other-model$/,
      },
      {
        args: ['--llm-url', closed],
        env: { OPENAI_API_KEY: KEY },
        line: new RegExp(`^setup: could not reach ${closed.replace(/[./]/g, '\\$&')} \\(connection refused\\) — check the URL`),
      },
      {
        args: ['--llm-url', llm.url, '--model', 'fake-model', '--bot-token', 'not-a-token'],
        env: { OPENAI_API_KEY: KEY },
        line: /^setup: TELEGRAM_BOT_TOKEN does not look like a bot token/,
      },
      {
        args: ['--llm-url', llm.url, '--model', 'fake-model', '--api-root', tg.apiRoot],
        env: { OPENAI_API_KEY: KEY, TELEGRAM_BOT_TOKEN: '999:refused-token-abcdefgh' },
        line: /^setup: Telegram refused the bot token \(401\) — copy it again from @BotFather/,
      },
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
    assert.equal(
      await runSetup({ argv: args.filter((a) => a !== '--bot-token' && a !== '123:abcdefghijklmnop'), env: { OPENAI_API_KEY: KEY }, cwd: dir, io }),
      2,
    );
    assert.match(lines[0]!, /^ERR setup: .*\.env exists — pass --yes to update it/);
    assert.equal(await readFile(envFile, 'utf8'), before, 'untouched');

    lines.length = 0;
    const code = await runSetup({
      argv: ['--yes', '--out', envFile, '--llm-url', llm.url, '--model', 'other-model', '--no-telegram'],
      env: { OPENAI_API_KEY: KEY },
      cwd: dir,
      io,
    });
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
    const {
      run,
      screen: shown,
      answer,
    } = onTerminal(
      [process.execPath, '--import', tsxLoader, path.join(repoRoot, 'src/cli/setup.ts'), '--out', envFile, '--api-root', tg.apiRoot, '--owner', '@ada_owner'],
      {},
      dir,
    );
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
    const screen = shown();
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
