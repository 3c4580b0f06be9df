/**
 * The terminal channel (session `console:{CONSOLE_CHAT_ID}`). Piped, it reads one message per
 * line, prints each reply on stdout in order, and resolves `finished` after the last reply once
 * input ends — so it can be scripted. Only replies go to stdout; logs go to stderr.
 * On a terminal it is a chat for a person: line editing and history (readline), a banner
 * (`greet`), a prompt only while nothing is being answered, /quit (or Ctrl+D) to leave; the
 * daemon sends its logs to a file then (src/app/run-mode.ts), so nothing else prints here.
 */
import readline from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { textReply, type Channel, type InboundHandler, type Reply } from '../core/channel.js';
import { scrubSecrets } from '../core/log.js';
import type { ChannelProvider } from './provider.js';

/** What leaves the terminal chat (besides Ctrl+D and Ctrl+C). */
const QUIT = ['/quit', '/exit'];

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
  /** A prompt is on the screen (interactive): a line printed now goes above it. */
  private prompted = false;
  /** Message ids stay unique across runs (the session dedups redelivered messages by id). */
  private readonly runId = Date.now().toString(36);

  constructor(private readonly opts: ConsoleChannelOptions) {
    this.input = opts.input ?? process.stdin;
    this.output = opts.output ?? process.stdout;
    this.interactive = opts.interactive ?? Boolean((this.input as NodeJS.ReadStream).isTTY);
    this.finished = new Promise((r) => (this.resolveFinished = r));
  }

  async start(onMessage: InboundHandler): Promise<void> {
    this.rl = this.interactive
      ? readline.createInterface({ input: this.input, output: this.output, terminal: Boolean((this.output as NodeJS.WriteStream).isTTY), prompt: '> ' })
      : readline.createInterface({ input: this.input, terminal: false });
    // In terminal mode readline takes Ctrl+C itself; the daemon's SIGINT handler stops it gracefully.
    this.rl.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
    this.rl.on('line', (line) => {
      const text = line.replace(/\r$/, '');
      this.prompted = false;
      if (!text.trim()) return this.prompt();
      if (this.interactive && QUIT.includes(text.trim().toLowerCase())) return void this.rl?.close();
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
        this.replyFor(),
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
    const above = this.prompted;
    if (above) this.clearPromptLine();
    await this.write(`${text}\n`);
    // A reminder that came while the person was typing: their line comes back under it.
    if (above) this.prompt(true);
  }

  /** The way back to the terminal: every line printed in turn (a recovered message's too). */
  replyFor(): Reply {
    return textReply((text) => this.send(this.opts.chatId, text));
  }

  /** Interactive: the one-line banner, then the first prompt. */
  greet(banner: string): void {
    if (!this.interactive) return;
    void this.write(`${banner}\n`);
    this.prompt();
  }

  async stop(): Promise<void> {
    this.rl?.close();
  }

  private prompt(keepTyped = false): void {
    if (!this.interactive || this.pending.size > 0 || !this.rl) return;
    this.prompted = true;
    this.rl.prompt(keepTyped);
  }

  private clearPromptLine(): void {
    this.prompted = false;
    if (!(this.output as NodeJS.WriteStream).isTTY) return void this.output.write('\n');
    readline.clearLine(this.output, 0);
    readline.cursorTo(this.output, 0);
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

/** The terminal: always at hand, so the app lists it last (served when no other channel is configured). */
export const consoleChannel: ChannelProvider = {
  name: 'console',
  read: () => ({ configured: true, secrets: [], owners: [] }),
  create: (_settings, { config }) => new ConsoleChannel({ chatId: config.consoleChatId }),
  chatShape: () => ({ kind: 'private', stand: 'Terminal' }),
};
