/**
 * The words a /forget takes out (privacy/forget.ts): matched case-insensitively across any
 * run of spaces, and redacted to `[forgotten]`; the stores are given them as a Redaction
 * (storage/redaction.ts).
 */
import type { Redaction } from '../../storage/redaction.js';

export const REDACTED = '[forgotten]';
/** Shorter words would take out far more than the user means ("/forget a"). */
export const MIN_FORGET_CHARS = 3;

/** The words to forget: matched case-insensitively, any run of spaces between them. */
export class Phrase implements Redaction {
  readonly text: string;
  private readonly once: RegExp;
  private readonly all: RegExp;

  constructor(words: string) {
    this.text = words.trim().replace(/\s+/g, ' ');
    const body = this.text
      .split(' ')
      .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('\\s+');
    this.once = new RegExp(body, 'iu');
    this.all = new RegExp(body, 'giu');
  }

  test(s: string): boolean {
    return this.once.test(s);
  }

  redact(s: string): string {
    return s.replace(this.all, REDACTED);
  }
}
