/**
 * The terminal channel (session `console:{CONSOLE_CHAT_ID}`). Interactive with a prompt on a
 * TTY; piped, it reads one message per line, prints each reply on stdout in order, and
 * resolves `finished` after the last reply once input ends — so it can be scripted.
 * Only replies go to stdout; logs go to stderr.
 */
import readline from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Channel, InboundHandler } from '../core/channel.js';
import { scrubSecrets } from '../core/log.js';

/** C0 controls but tab and line feed, DEL, C1 controls, and the bidi overrides that reorder a line. */
const CONTROL_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

export interface ConsoleChannelOptions {
  chatId: string;
  input?: Readable;
  output?: Writable;
  interactive?: boolean;
  userName?: string;
}

export class ConsoleChannel implements Channel {
  readonly name = 'console';
  private rl: readline.Interface | undefined;
  private readonly input: Readable;
  private readonly output: Writable;
  private readonly interactive: boolean;
  private readonly pending = new Set<Promise<void>>();
  private resolveFinished!: () => void;
  /** Resolves when input has ended and every message read has been answered. */
  readonly finished: Promise<void>;
  private seq = 0;
  /** Message ids stay unique across runs (the session dedups redelivered messages by id). */
  private readonly runId = Date.now().toString(36);

  constructor(private readonly opts: ConsoleChannelOptions) {
    this.input = opts.input ?? process.stdin;
    this.output = opts.output ?? process.stdout;
    this.interactive = opts.interactive ?? Boolean((this.input as NodeJS.ReadStream).isTTY);
    this.finished = new Promise((r) => (this.resolveFinished = r));
  }

  async start(onMessage: InboundHandler): Promise<void> {
    this.rl = readline.createInterface({ input: this.input, terminal: false });
    this.prompt();
    this.rl.on('line', (line) => {
      const text = line.replace(/\r$/, '');
      if (!text.trim()) return this.prompt();
      const p = onMessage(
        {
          channel: this.name,
          chatId: this.opts.chatId,
          userId: 'console',
          // The terminal is the operator's own.
          role: 'owner',
          userName: this.opts.userName ?? process.env.USER ?? 'user',
          text,
          messageId: `${this.runId}-${++this.seq}`,
          receivedAt: new Date(),
          chat: { kind: 'private', name: 'Terminal' },
        },
        (reply) => this.send(this.opts.chatId, reply),
      )
        .catch((err: unknown) => this.write(`Sorry, that message could not be handled: ${(err as Error).message}\n`))
        .finally(() => {
          this.pending.delete(p);
          this.prompt();
        });
      this.pending.add(p);
    });
    this.rl.on('close', () => {
      void Promise.allSettled([...this.pending]).then(() => this.resolveFinished());
    });
  }

  async send(_chatId: string, text: string): Promise<void> {
    await this.write(`${text}\n`);
  }

  async stop(): Promise<void> {
    this.rl?.close();
  }

  private prompt(): void {
    if (this.interactive && this.pending.size === 0) void this.write('> ');
  }

  private write(text: string): Promise<void> {
    // The operator's terminal obeys escape sequences: what the model (or an error) says is
    // printed without control characters (line breaks and tabs kept) and without secrets.
    const s = scrubSecrets(text).replace(CONTROL_CHARS, '');
    return new Promise((resolve) => {
      if (this.output.write(s)) resolve();
      else this.output.once('drain', () => resolve());
    });
  }
}
