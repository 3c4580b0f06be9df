/**
 * The words a /forget takes out (privacy/forget.ts): matched case-insensitively across any
 * run of spaces, and redacted to `[forgotten]` in text and in JSON lines.
 */
export const REDACTED = '[forgotten]';
/** Shorter words would take out far more than the user means ("/forget a"). */
export const MIN_FORGET_CHARS = 3;

/** The words to forget: matched case-insensitively, any run of spaces between them. */
export class Phrase {
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

/** Redacts the words in every string of a JSON value. */
function redactValue(v: unknown, p: Phrase): unknown {
  if (typeof v === 'string') return p.test(v) ? p.redact(v) : v;
  if (Array.isArray(v)) return v.map((x) => redactValue(x, p));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, redactValue(x, p)]));
  return v;
}

/**
 * A JSON-lines text with the words redacted in every string of the lines `mine` accepts (the
 * chat's own lines of a shared log); a torn line that holds them is dropped.
 */
export function redactJsonLines(text: string, p: Phrase, mine: (line: any) => boolean = () => true): string {
  return text
    .split('\n')
    .flatMap((line) => {
      if (!line.trim()) return [line];
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        return p.test(line) ? [] : [line];
      }
      if (!mine(parsed)) return [line];
      const next = JSON.stringify(redactValue(parsed, p));
      return next === JSON.stringify(parsed) ? [line] : [next];
    })
    .join('\n');
}
