/**
 * How the daemon runs where it was started, decided once by main before anything starts: the
 * channel, whether a person sits at the terminal, where the logs go, and whether it must not
 * start at all.
 *
 * Where logs go (one rule per case):
 * - LOG_FILE set: everything to that file.
 * - The terminal chat (no bot token, stdin a terminal): `<workspace>/logs/membot.log`, so
 *   multi-line log records never mix into the conversation.
 * - Piped input (no bot token, stdin not a terminal): stderr, all levels. stdout carries the
 *   replies and nothing else, because scripts read it.
 * - Telegram: info and debug to stdout, warnings and errors to stderr, so pm2's error log holds
 *   only what needs a look.
 *
 * Under pm2 with no bot token the daemon would sit "online" reading a stdin nobody writes to;
 * it refuses to start instead (exit 2, which ecosystem.config.js tells pm2 not to restart).
 */
import path from 'node:path';
import type { Config } from '../config/env.js';
import { servedChannel } from './channels.js';

export type LogRoute = { kind: 'file'; file: string } | { kind: 'stderr' } | { kind: 'split' };

export interface RunMode {
  /** The channel served (app/channels.ts: the first one configured, else the terminal). */
  channel: string;
  /** The console channel with a person at a terminal (banner, prompt, line editing). */
  terminal: boolean;
  logs: LogRoute;
  /** Set: the one line to print before exiting with code 2. */
  refusal?: string;
}

/** pm2 gives every process it starts its `pm_id` (and PM2_HOME); nothing else sets pm_id. */
export function underPm2(env: Record<string, string | undefined>): boolean {
  return env.pm_id !== undefined && env.pm_id !== '';
}

/** The terminal chat's log file when LOG_FILE is not set. */
export function defaultLogFile(workspaceDir: string): string {
  return path.join(workspaceDir, 'logs', 'membot.log');
}

export function runMode(
  config: Pick<Config, 'logFile' | 'workspaceDir' | 'channels'>,
  env: Record<string, string | undefined>,
  stdinIsTerminal: boolean,
): RunMode {
  const channel = servedChannel(config).name;
  const terminal = channel === 'console' && stdinIsTerminal;
  const logs: LogRoute = config.logFile
    ? { kind: 'file', file: config.logFile }
    : terminal
      ? { kind: 'file', file: defaultLogFile(config.workspaceDir) }
      : channel === 'console'
        ? { kind: 'stderr' }
        : { kind: 'split' };
  const mode: RunMode = { channel, terminal, logs };
  if (channel === 'console' && underPm2(env)) {
    mode.refusal =
      'no channel to serve under pm2: set TELEGRAM_BOT_TOKEN in .env (npm run setup asks for it), or run npm start in a terminal for the terminal chat';
  }
  return mode;
}

/** The terminal chat's one-line banner. */
export function terminalBanner(opts: { model: string; chatId: string; logFile: string; cwd: string }): string {
  const rel = path.relative(opts.cwd, opts.logFile);
  const logs = rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : opts.logFile;
  return `membot (${opts.model}, chat console:${opts.chatId}): type a message, /help for commands, /quit or Ctrl+D to leave. Logs: ${logs}`;
}
