/**
 * Running the daemon or a CLI of this repo in a child process, as a user would: `node --import
 * tsx <script>`, with an environment built from nothing but what the test gives (the shell's
 * settings or a developer's .env must not leak in) plus what Node needs to run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { patient } from './wait.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const mainTs = path.join(repoRoot, 'src', 'main.ts');
/** tsx as an absolute URL, for children whose cwd is a temp dir (no node_modules there). */
export const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** A child's environment: UTC, PATH/HOME/TMPDIR from this process, then `env`. */
export function childEnv(env: Record<string, string> = {}): Record<string, string> {
  const base: Record<string, string> = { TZ: 'UTC' };
  for (const k of ['PATH', 'HOME', 'TMPDIR']) if (process.env[k]) base[k] = process.env[k]!;
  return { ...base, ...env };
}

/**
 * The environment of a daemon under test that talks to a fake LLM server and a Telegram
 * emulator (both on 127.0.0.1), logging at info; `extra` adds or overrides settings.
 */
export function telegramDaemonEnv(
  to: { llmUrl: string; workspace: string; tg: { token: string; apiRoot: string } },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    OPENAI_BASE_URL: to.llmUrl,
    OPENAI_API_KEY: 'sk-test-key-123456',
    WORKSPACE_DIR: to.workspace,
    TELEGRAM_BOT_TOKEN: to.tg.token,
    TELEGRAM_API_ROOT: to.tg.apiRoot,
    LOG_LEVEL: 'info',
    ...extra,
  };
}

/** The daemon (src/main.ts through tsx) with exactly `env` (childEnv added); `started` resolves at its "daemon started" line. */
export function startDaemonChild(env: Record<string, string>, cwd: string): { child: ChildProcess; started: Promise<void>; log: () => string } {
  const child = spawn(process.execPath, ['--import', tsxLoader, mainTs], { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  let resolve!: () => void;
  const started = new Promise<void>((r) => (resolve = r));
  const onData = (c: Buffer) => {
    log += c.toString();
    if (log.includes('daemon started')) resolve();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  return { child, started, log: () => log };
}

/** Kills (SIGKILL) the daemons still running, and waits until each has exited: a test's teardown. */
export async function killDaemons(children: ChildProcess[]): Promise<void> {
  const running = children.filter((c) => c.exitCode === null && c.signalCode === null);
  const closed = running.map((c) => new Promise((r) => c.once('close', r)));
  for (const c of running) c.kill('SIGKILL');
  await Promise.all(closed);
}

/** Warnings and errors of the daemons' runs, counted by message: the why behind a failure. */
export function warningsOf(logs: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const raw of logs.join('').split('\n')) {
    let line: { level?: number; msg?: string };
    try {
      line = JSON.parse(raw) as { level?: number; msg?: string };
    } catch {
      continue;
    }
    if ((line.level ?? 0) >= 40 && line.msg) counts[line.msg] = (counts[line.msg] ?? 0) + 1;
  }
  return counts;
}

export interface BuiltDaemon {
  child: ChildProcess;
  log: () => string;
  /** At its "daemon started" line. */
  started: Promise<void>;
  exited: Promise<void>;
}

/** The built daemon (dist/main.js: npm run build first) with exactly `env` (childEnv added). */
export function startBuiltDaemon(env: Record<string, string>, cwd: string): BuiltDaemon {
  const child = spawn(process.execPath, [path.join(repoRoot, 'dist', 'main.js')], { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  let started!: () => void;
  const onData = (c: Buffer) => {
    log += c.toString();
    if (log.includes('daemon started')) started();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  return {
    child,
    log: () => log,
    started: new Promise<void>((r) => (started = r)),
    exited: new Promise<void>((r) => child.once('close', () => r())),
  };
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A child process whose output is collected as it comes; killed (SIGKILL) after `timeoutMs` (default: a scaled minute). */
export interface Spawned {
  out: () => string;
  err: () => string;
  write: (text: string) => void;
  /** Writes `text` (if any) and closes stdin. */
  end: (text?: string) => void;
  exited: Promise<number | null>;
  kill: () => void;
  /** Sends `sig` (a stop the way systemd or pm2 asks: SIGTERM). */
  signal: (sig: NodeJS.Signals) => void;
}

/** Starts `cmd` with exactly `env` (build it with childEnv) in `cwd`. */
export function spawnCollected(cmd: string, args: string[], opts: { env: Record<string, string>; cwd: string; timeoutMs?: number }): Spawned {
  const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  // A child that exits before reading its input closes the pipe: not the test's failure.
  child.stdin.on('error', () => undefined);
  // Only for a child that hangs: it counts from the spawn, the start under tsx included.
  const guard = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? patient(60_000));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve(code);
    });
  });
  return {
    out: () => out,
    err: () => err,
    write: (text) => child.stdin.write(text),
    end: (text) => child.stdin.end(text),
    exited,
    kill: () => child.kill('SIGKILL'),
    signal: (sig) => child.kill(sig),
  };
}

/** Runs `cmd` to its end with `input` on stdin (then closed): exit code and output. */
export async function runToEnd(cmd: string, args: string[], opts: { env: Record<string, string>; cwd: string; input?: string }): Promise<CliRun> {
  const p = spawnCollected(cmd, args, opts);
  p.end(opts.input);
  const code = await p.exited;
  return { code, stdout: p.out(), stderr: p.err() };
}

/**
 * Runs a CLI script of the repo (e.g. `src/cli/memory.ts`) to completion from the repo root,
 * with a test API key and warnings-only logs unless `env` says otherwise. `input`: piped to its
 * stdin, then closed (the daemon on the terminal answers each line and exits).
 */
export function runCli(script: string, args: string[], env: Record<string, string> = {}, input?: string): Promise<CliRun> {
  return runToEnd(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: repoRoot,
    env: childEnv({ LOG_LEVEL: 'warn', OPENAI_API_KEY: 'sk-test-key-123456', ...env }),
    ...(input !== undefined ? { input } : {}),
  });
}

/** `npm run memory -- <args>`; the LLM URL defaults to a closed port so nothing leaves the machine. */
export function memoryCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCli('src/cli/memory.ts', args, { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', ...env });
}
