/**
 * `npm run setup` — from a fresh clone to a working bot: asks for the LLM (base URL, key,
 * model) and the Telegram bot token, checks each for real (setup-checks.ts), learns the owner's
 * user id from one message they send the bot (confirmed at the terminal; --yes needs --owner),
 * and writes .env (atomic, 0600, other lines kept). Nothing is written until every check has passed; secrets are read without echo and
 * never printed. Flags (and the usual environment variables) answer the questions, so scripts
 * and tests run it without a terminal.
 *
 * Exit codes: 0 written, 1 a check failed (nothing written), 2 bad arguments or a .env that
 * needs --yes to be updated.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { loadTelegramConfig } from '../config/env.js';
import { registerSecret, scrubSecrets } from '../core/log.js';
import { writeFileAtomic } from '../storage/atomic.js';
import { answerHelp } from './help.js';
import type { CliIo } from '../core/cli-io.js';
import { mergeEnv, parseEnv, readTextIfAny } from './env-file.js';
import { Prompter } from './prompt.js';
import { checkLlm, getMe, listModels, llmWhere, telegramClient, telegramProblem, waitForOwner, type LlmTarget, type Owner } from './setup-checks.js';

export const SETUP_USAGE = `usage: npm run setup [-- options]
  Asks what it needs on a terminal; flags (or the environment variables in brackets) answer
  the questions, and --yes asks nothing (for scripts). Prefer the environment for the key and
  the token: command-line flags are visible to other users of the machine (ps).
  --llm-url URL        OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1 (Ollama); empty: OpenAI [OPENAI_BASE_URL]
  --llm-key KEY        API key; none needed by most local servers [OPENAI_API_KEY]
  --model NAME         model for answers (default gpt-4o-mini, or the server's first) [LLM_MODEL]
  --bot-token TOKEN    Telegram bot token from @BotFather [TELEGRAM_BOT_TOKEN]
  --no-telegram        no Telegram: the bot is a chat in the terminal
  --api-root URL       another Bot API server [TELEGRAM_API_ROOT]
  --owner ID           your Telegram user id (or @username): skips waiting for your message;
                       needed with --yes (no one is there to confirm who wrote)
  --owner-wait SEC     how long to wait for your message to the bot (default 120; 0: do not wait)
  --workspace DIR      where memory and sessions live (default ./workspace) [WORKSPACE_DIR]
  --out PATH           the file to write (default .env; the daemon reads .env where it starts)
  --yes, -y            ask nothing; update an existing .env (its other lines are kept)`;

const CHECK_TIMEOUT_MS = 30_000;
const TELEGRAM_TIMEOUT_MS = 15_000;

interface Flags {
  llmUrl?: string | undefined;
  llmKey?: string | undefined;
  model?: string | undefined;
  botToken?: string | undefined;
  noTelegram: boolean;
  apiRoot?: string | undefined;
  owner?: string | undefined;
  ownerWaitSec: number;
  workspace?: string | undefined;
  envFile: string;
  yes: boolean;
}

function parseFlags(argv: string[], env: Record<string, string | undefined>): Flags | string {
  let v;
  try {
    v = parseArgs({
      args: argv,
      strict: true,
      options: {
        'llm-url': { type: 'string' },
        'llm-key': { type: 'string' },
        model: { type: 'string' },
        'bot-token': { type: 'string' },
        'no-telegram': { type: 'boolean' },
        'api-root': { type: 'string' },
        owner: { type: 'string' },
        'owner-wait': { type: 'string' },
        workspace: { type: 'string' },
        out: { type: 'string' },
        yes: { type: 'boolean', short: 'y' },
      },
    }).values;
  } catch (err) {
    return (err as Error).message;
  }
  const wait = v['owner-wait'] === undefined ? 120 : Number(v['owner-wait']);
  if (!Number.isInteger(wait) || wait < 0 || wait > 3600) return '--owner-wait takes whole seconds from 0 to 3600';
  const pick = (flag: string | undefined, name: string) => flag ?? (env[name]?.trim() || undefined);
  return {
    llmUrl: pick(v['llm-url'], 'OPENAI_BASE_URL'),
    llmKey: pick(v['llm-key'], 'OPENAI_API_KEY'),
    model: pick(v.model, 'LLM_MODEL'),
    botToken: pick(v['bot-token'], 'TELEGRAM_BOT_TOKEN'),
    noTelegram: v['no-telegram'] === true,
    apiRoot: pick(v['api-root'], 'TELEGRAM_API_ROOT'),
    owner: v.owner,
    ownerWaitSec: wait,
    workspace: pick(v.workspace, 'WORKSPACE_DIR'),
    envFile: v.out ?? '.env',
    yes: v.yes === true,
  };
}

export interface SetupOptions {
  argv: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  io: CliIo;
  /** Set: a person answers the questions here. Unset: flags and the environment only. */
  prompter?: Prompter | undefined;
  /** Pause between getUpdates polls while waiting for the owner (ms). */
  ownerPollGapMs?: number;
}

/** Thrown to stop with a line on stderr and an exit code; nothing has been written. */
class Stop extends Error {
  constructor(
    readonly line: string,
    readonly code: 1 | 2,
  ) {
    super(line);
  }
}

export async function runSetup(opts: SetupOptions): Promise<number> {
  try {
    return await setup(opts);
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    opts.io.err(`setup: ${scrubSecrets(err.line)}`);
    if (err.code === 1) opts.io.err('Nothing was written.');
    return err.code;
  }
}

async function setup(opts: SetupOptions): Promise<number> {
  const { io, prompter: ask } = opts;
  const flags = parseFlags(opts.argv, opts.env);
  if (typeof flags === 'string') throw new Stop(`${flags}\n${SETUP_USAGE}`, 2);
  for (const s of [flags.llmKey, flags.botToken]) registerSecret(s);

  const envFile = path.resolve(opts.cwd, flags.envFile);
  const existing = await readTextIfAny(envFile);
  const current = parseEnv(existing);
  for (const s of [current.OPENAI_API_KEY, current.TELEGRAM_BOT_TOKEN]) registerSecret(s);
  if (existing !== undefined && !flags.yes) {
    if (!ask) throw new Stop(`${envFile} exists — pass --yes to update it (the lines setup does not ask about are kept)`, 2);
    if (!(await ask.confirm(`${envFile} exists. Update it? (only the settings asked here change; every other line is kept)`, true))) return 0;
  }
  // Without a person to say "that is me", whoever messages the bot first would become its owner
  // (a stranger who found the bot's name): refused before any check runs.
  const token = flags.noTelegram ? undefined : (flags.botToken ?? current.TELEGRAM_BOT_TOKEN)?.trim();
  if (!ask && token && flags.owner === undefined && flags.ownerWaitSec > 0) {
    throw new Stop(
      'with --yes (or no terminal) nobody confirms who messages the bot, so a stranger could become its owner — add --owner <your numeric user id or @username>, or --owner-wait 0 for no owner yet',
      2,
    );
  }

  const llm = await setUpLlm(flags, current, opts);
  const bot = await setUpTelegram(flags, current, opts);
  const owners = bot ? await setUpOwner(bot, flags, current, opts) : undefined;

  const values: Record<string, string> = {
    OPENAI_BASE_URL: llm.baseUrl ?? '',
    OPENAI_API_KEY: llm.apiKey ?? '',
    LLM_MODEL: llm.model,
  };
  if (bot || flags.noTelegram) values.TELEGRAM_BOT_TOKEN = bot?.token ?? '';
  if (bot?.apiRoot !== undefined) values.TELEGRAM_API_ROOT = bot.apiRoot;
  if (owners !== undefined) values.TELEGRAM_ALLOWED_USERS = owners;
  if (flags.workspace) values.WORKSPACE_DIR = flags.workspace;
  const base = existing ?? (await readTextIfAny(path.join(repoRoot(), '.env.example'))) ?? '';
  let text: string;
  try {
    text = mergeEnv(base, values);
  } catch (err) {
    throw new Stop((err as Error).message, 2);
  }
  await writeFileAtomic(envFile, text);
  io.out(`Wrote ${envFile} (readable by you only).`);

  io.out('');
  io.out('Done. Start the bot with: npm start');
  if (path.dirname(envFile) !== opts.cwd) io.out(`(it reads .env from the folder it starts in: ${path.dirname(envFile)})`);
  io.out(bot ? `Then write to @${bot.username} in Telegram.` : 'It is a chat in this terminal (no Telegram bot token given).');
  // pm2 runs dist/main.js and builds nothing: on a clone that never ran npm start there is none yet.
  io.out('Keep it running after you log out, and after a reboot: npm run build && npx pm2 start ecosystem.config.js && npx pm2 save && npx pm2 startup');
  return 0;
}

/** The LLM settings, checked: the server answers a 1-token request with this key and model. */
async function setUpLlm(flags: Flags, current: Record<string, string>, opts: SetupOptions): Promise<LlmTarget> {
  const { io, prompter: ask } = opts;
  if (ask) ask.say('\n1/3  The language model: any OpenAI-compatible server (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp).');
  for (;;) {
    let baseUrl = flags.llmUrl ?? current.OPENAI_BASE_URL;
    let apiKey = flags.llmKey ?? current.OPENAI_API_KEY;
    if (ask && flags.llmUrl === undefined) baseUrl = await ask.ask('Base URL (Enter: OpenAI)', current.OPENAI_BASE_URL || undefined);
    if (ask && flags.llmKey === undefined) {
      const keep = current.OPENAI_API_KEY ? ' (Enter: keep the one in .env)' : baseUrl ? ' (Enter: none, for a local server)' : '';
      apiKey = (await ask.askSecret(`API key, typed unseen${keep}`)) || current.OPENAI_API_KEY;
    }
    baseUrl = baseUrl?.trim() || undefined;
    apiKey = apiKey?.trim() || undefined;
    registerSecret(apiKey);
    if (!baseUrl && !apiKey) {
      if (!ask) throw new Stop('no LLM given — pass --llm-url for a local server, or set OPENAI_API_KEY (or --llm-key) for OpenAI', 1);
      ask.say('  OpenAI needs an API key (https://platform.openai.com/api-keys); a local server needs its URL.');
      continue;
    }
    if (baseUrl && !/^https?:\/\/[^\s]+$/.test(baseUrl)) {
      if (!ask) throw new Stop(`--llm-url ${JSON.stringify(baseUrl)} is not an http(s) URL`, 2);
      ask.say('  That is not an http(s) URL.');
      continue;
    }
    const target: LlmTarget = { baseUrl, apiKey, model: '', timeoutMs: CHECK_TIMEOUT_MS };
    const listed = await listModels(target);
    if ('problem' in listed) {
      if (!ask) throw new Stop(listed.problem, 1);
      ask.say(`  ✗ ${listed.problem}`);
      continue;
    }
    const { models } = listed;
    const def = models && models.length > 0 && !models.includes('gpt-4o-mini') ? models[0]! : 'gpt-4o-mini';
    target.model = flags.model ?? current.LLM_MODEL ?? def;
    if (ask && flags.model === undefined) {
      if (models?.length)
        ask.say(`  ${llmWhere(target)} offers ${models.length} model(s): ${models.slice(0, 12).join(', ')}${models.length > 12 ? ', …' : ''}`);
      target.model = await ask.ask('Model', current.LLM_MODEL || def);
    }
    const check = await checkLlm(target, models);
    if (check.ok) {
      io.out(`LLM: ok — ${target.model} at ${llmWhere(target)} answered in ${check.ms} ms`);
      return target;
    }
    if (!ask) throw new Stop(check.problem, 1);
    ask.say(`  ✗ ${check.problem}`);
  }
}

interface Bot {
  token: string;
  apiRoot: string | undefined;
  username: string;
}

/** The bot token, checked with getMe; undefined when Telegram is left out (the terminal chat). */
async function setUpTelegram(flags: Flags, current: Record<string, string>, opts: SetupOptions): Promise<Bot | undefined> {
  const { io, prompter: ask } = opts;
  if (flags.noTelegram) return undefined;
  const apiRoot = flags.apiRoot ?? (current.TELEGRAM_API_ROOT || undefined);
  if (ask && flags.botToken === undefined) {
    ask.say('\n2/3  Telegram. Make a bot: open @BotFather in Telegram, send /newbot, give it a name, then a username');
    ask.say('     ending in "bot"; BotFather answers with its token (like 123456789:AAH…). Enter with no token: no');
    ask.say('     Telegram, the bot is a chat in this terminal.');
  }
  for (;;) {
    let token = flags.botToken ?? current.TELEGRAM_BOT_TOKEN;
    if (ask && flags.botToken === undefined)
      token =
        (await ask.askSecret(`Bot token, typed unseen${current.TELEGRAM_BOT_TOKEN ? ' (Enter: keep the one in .env)' : ''}`)) || current.TELEGRAM_BOT_TOKEN;
    token = token?.trim() || undefined;
    if (!token) return undefined;
    registerSecret(token);
    // The daemon's own reading of the two settings: same rules, and its lines never show the token.
    const { problems } = loadTelegramConfig({ TELEGRAM_BOT_TOKEN: token, TELEGRAM_API_ROOT: apiRoot });
    let problem = problems[0];
    if (!problem) {
      try {
        const me = await getMe(telegramClient(token, apiRoot), TELEGRAM_TIMEOUT_MS);
        io.out(`Telegram: ok — the token is @${me.username}'s${apiRoot ? ` (at ${apiRoot})` : ''}`);
        return { token, apiRoot, username: me.username };
      } catch (err) {
        problem = telegramProblem(err, apiRoot);
      }
    }
    if (!ask || flags.botToken !== undefined) throw new Stop(problem, 1);
    ask.say(`  ✗ ${problem}`);
  }
}

/** TELEGRAM_ALLOWED_USERS with the owner in it: from --owner, or from the first message they send the bot. */
async function setUpOwner(bot: Bot, flags: Flags, current: Record<string, string>, opts: SetupOptions): Promise<string | undefined> {
  const { io, prompter: ask } = opts;
  const listed = (current.TELEGRAM_ALLOWED_USERS ?? '').split(/[\s,]+/).filter(Boolean);
  const add = (who: string): string => {
    const { problems } = loadTelegramConfig({ TELEGRAM_ALLOWED_USERS: who });
    if (problems.length > 0) throw new Stop(`--owner ${JSON.stringify(who)} is neither a numeric user id nor a @username`, 2);
    return [...new Set([...listed, who])].join(',');
  };
  if (flags.owner !== undefined) return add(flags.owner);
  // Only a person may say which sender is them (setup() refuses to wait without one).
  if (flags.ownerWaitSec === 0 || !ask) return undefined;

  ask.say('\n3/3  You, the owner: the bot answers you without asking, and only you approve others.');
  const tg = telegramClient(bot.token, bot.apiRoot);
  const got = await waitForOwner(tg, {
    until: Date.now() + flags.ownerWaitSec * 1000,
    gapMs: opts.ownerPollGapMs ?? 1000,
    // No by default: Enter on a stranger's message must not make them the owner.
    accept: (o) => ask.confirm(`A message from ${describe(o)}. Is this you?`, false),
    // Asked once the messages already waiting are known: those are offered first, each to be confirmed.
    ready: () => io.out(`Send any message to @${bot.username} in Telegram now (https://t.me/${bot.username}); waiting up to ${flags.ownerWaitSec} s for it.`),
  });
  if ('owner' in got) {
    io.out(`Owner: ${describe(got.owner)}, added to TELEGRAM_ALLOWED_USERS.`);
    // A word back in the chat: the owner sees setup heard them. The message itself stays for the bot to answer.
    await tg.sendMessage(got.owner.id, "Setup got your message: you are this bot's owner. I answer here once the bot runs (npm start).").catch(() => undefined);
    return add(String(got.owner.id));
  }
  const problem = got.problem === 'no message reached the bot in time' ? `no message reached @${bot.username} within ${flags.ownerWaitSec} s` : got.problem;
  ask.say(`  ✗ ${problem}.`);
  const id = await ask.ask('Your numeric Telegram user id (Enter: none; you then pair like anyone else: npm run pair)');
  return id ? add(id) : undefined;
}

function describe(o: Owner): string {
  return `${o.name || 'someone'}${o.username ? ` (@${o.username}, id ${o.id})` : ` (id ${o.id})`}`;
}

function repoRoot(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const argv = process.argv.slice(2);
  answerHelp(argv, SETUP_USAGE);
  const io: CliIo = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) };
  const person = !argv.includes('--yes') && !argv.includes('-y') && Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const prompter = person ? new Prompter() : undefined;
  if (person) io.out('membot setup: each answer is checked for real; .env is written only at the end. Ctrl+C leaves.');
  runSetup({ argv, env: process.env, cwd: process.cwd(), io, prompter }).then(
    (code) => {
      prompter?.close();
      process.exit(code);
    },
    (err: unknown) => {
      process.stderr.write(`setup: ${scrubSecrets((err as Error).message)}\n`);
      process.exit(1);
    },
  );
}
