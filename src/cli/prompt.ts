/**
 * Questions on a terminal for `npm run setup` (node:readline): plain ones with a default, yes/no,
 * and secrets read without echo — readline writes what is typed through an output stream this
 * mutes while a secret is typed, so the key never reaches the screen (or a recording of it).
 */
import readline from 'node:readline/promises';
import { Writable } from 'node:stream';

export class Prompter {
  private readonly rl: readline.Interface;
  private muted = false;

  constructor(
    input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
  ) {
    const screen = new Writable({
      write: (chunk, _enc, cb) => {
        if (!this.muted) output.write(chunk);
        cb();
      },
    });
    this.rl = readline.createInterface({ input, output: screen, terminal: true });
    // Nothing is written before the end, so Ctrl+C can simply leave.
    this.rl.on('SIGINT', () => {
      output.write('\nSetup stopped; nothing was written.\n');
      process.exit(130);
    });
  }

  /** The answer, trimmed; `def` when the answer is empty. */
  async ask(question: string, def?: string): Promise<string> {
    const answer = (await this.rl.question(def ? `${question} [${def}]: ` : `${question}: `)).trim();
    return answer || def || '';
  }

  /** A secret, typed without echo. Empty when the user just presses Enter. */
  async askSecret(question: string): Promise<string> {
    this.output.write(`${question}: `);
    this.muted = true;
    try {
      return (await this.rl.question('')).trim();
    } finally {
      this.muted = false;
      this.output.write('\n');
    }
  }

  async confirm(question: string, def: boolean): Promise<boolean> {
    for (;;) {
      const a = (await this.rl.question(`${question} [${def ? 'Y/n' : 'y/N'}]: `)).trim().toLowerCase();
      if (a === '') return def;
      if (['y', 'yes'].includes(a)) return true;
      if (['n', 'no'].includes(a)) return false;
    }
  }

  say(line: string): void {
    this.output.write(`${line}\n`);
  }

  close(): void {
    this.rl.close();
  }
}
