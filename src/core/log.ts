/**
 * Logging with pino. JSON lines by default; readable lines on a terminal. Where they go is
 * decided by the caller (the daemon: src/app/run-mode.ts): a file, stderr, or split — info
 * and debug on stdout, warnings and errors on stderr. Never stdout while the console channel
 * owns it for replies.
 *
 * Secrets: every line passes through `scrubSecrets` before it is written, so an API key or
 * bot token that reaches an error message (telegraf puts the token in request URLs) is
 * replaced by `[redacted]` whatever path it took into the log.
 */
import { pino, type Logger, type DestinationStream } from 'pino';
import pretty from 'pino-pretty';
import { PRIVATE_FILE_MODE, preparePrivateFileSync } from './private.js';

export type { Logger };

const secrets = new Set<string>();

/** Register a value that must never appear in a log line (keys, tokens). */
export function registerSecret(value: string | undefined): void {
  // Very short values would redact ordinary words; real keys and tokens are long.
  if (value && value.length >= 8) secrets.add(value);
}

export function scrubSecrets(text: string): string {
  let out = text;
  for (const s of secrets) {
    if (out.includes(s)) out = out.split(s).join('[redacted]');
  }
  return out;
}

/**
 * Text that is still growing (a streamed answer) may end in the first characters of a secret
 * whose rest has not arrived: that tail is cut (4 characters or more), so no preview shows it.
 */
export function trimSecretTail(text: string): string {
  for (const s of secrets) {
    for (let n = Math.min(s.length - 1, text.length); n >= 4; n--) {
      if (text.endsWith(s.slice(0, n))) return text.slice(0, text.length - n);
    }
  }
  return text;
}

export interface LogOptions {
  level: string;
  /** Write to this file instead of stderr. */
  file?: string | undefined;
  /** Info and below to stdout, warnings and above to stderr (not with `file`). */
  split?: boolean;
  /** Force readable output (default: when the stream written to is a TTY and no file is set). */
  pretty?: boolean;
  /** A custom destination (tests capture logs this way). */
  destination?: DestinationStream;
}

export function createLogger(opts: LogOptions): Logger {
  let dest: DestinationStream;
  if (opts.destination) {
    dest = opts.destination;
  } else if (opts.file) {
    // The log holds pairing codes and user ids: for the daemon's user only.
    preparePrivateFileSync(opts.file);
    dest = pino.destination({ dest: opts.file, sync: true, mode: PRIVATE_FILE_MODE });
  } else if (opts.split) {
    // dedupe: a record goes to the matching stream of the highest level only (warn: stderr alone).
    dest = pino.multistream(
      [
        { level: 'trace', stream: stdStream(1, opts.pretty ?? process.stdout.isTTY) },
        { level: 'warn', stream: stdStream(2, opts.pretty ?? process.stderr.isTTY) },
      ],
      { dedupe: true },
    );
  } else {
    dest = stdStream(2, opts.pretty ?? process.stderr.isTTY);
  }
  return pino(
    {
      level: opts.level,
      hooks: { streamWrite: scrubSecrets },
      redact: {
        paths: ['apiKey', '*.apiKey', 'token', '*.token', 'headers.authorization', '*.headers.authorization'],
        censor: '[redacted]',
      },
    },
    dest,
  );
}

function stdStream(fd: 1 | 2, readable: boolean): DestinationStream {
  return readable
    ? pretty({ destination: fd, sync: true, ignore: 'pid,hostname,component', translateTime: 'SYS:HH:MM:ss' })
    : pino.destination({ dest: fd, sync: true });
}

/**
 * A child logger tagged like the seed's log lines: `[Context] Memory context: 1250 chars`. The
 * one rule for tags: this adds them (as pino's msgPrefix, with the same `component` field), a
 * message never writes one by hand, and a logger that already has a tag keeps it (pino would
 * otherwise stack them: `[Upkeep] [Upkeep] …`).
 */
export function componentLogger(parent: Logger, component: string): Logger {
  if (parent.msgPrefix) return parent;
  return parent.child({ component }, { msgPrefix: `[${component}] ` });
}

/** A logger that drops everything: for tools and tests that need one but print nothing. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
