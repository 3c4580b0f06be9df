/**
 * The model's Markdown → Telegram's HTML subset (b, i, s, code, pre, a, blockquote,
 * tg-spoiler). Every character of the model's text is escaped (&, <, >; quotes inside href),
 * so nothing it writes can open a tag of its own. Markdown that does not close (a lone `*`,
 * `snake_case`, half a link) stays literal text rather than guessing.
 *
 * Telegram counts its 4096-character limit on the text after parsing; the visible text this
 * produces is never longer than the Markdown it came from (markup is only ever removed), so
 * a chunk the splitter sized by its Markdown fits both as HTML and as the plain-text fallback.
 */
import { parseBlocks, type CodeBlock } from './markdown.js';

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttr(s: string): string {
  return escapeHtml(s).replace(/"/g, '&quot;');
}

/** Renders a whole Markdown text (one message's worth) as Telegram HTML. */
export function renderTelegramHtml(markdown: string): string {
  const out: string[] = [];
  for (const block of parseBlocks(markdown)) {
    if (block.kind === 'code') out.push(renderCode(block));
    else out.push(renderProse(block.lines));
  }
  return out.join('\n');
}

function renderCode(block: CodeBlock): string {
  const body = escapeHtml(block.lines.join('\n'));
  const lang = block.lang.replace(/[^\w+#.-]/g, '');
  return lang ? `<pre><code class="language-${lang}">${body}</code></pre>` : `<pre>${body}</pre>`;
}

function renderProse(lines: string[]): string {
  const out: string[] = [];
  let quote: string[] = [];
  const flushQuote = () => {
    if (quote.length > 0) out.push(`<blockquote>${quote.join('\n')}</blockquote>`);
    quote = [];
  };
  for (const line of lines) {
    const q = /^ {0,3}> ?(.*)$/.exec(line);
    if (q) {
      quote.push(renderLine(q[1]!));
      continue;
    }
    flushQuote();
    out.push(renderLine(line));
  }
  flushQuote();
  return out.join('\n');
}

function renderLine(line: string): string {
  const heading = HEADING.exec(line);
  if (heading) return `<b>${renderInline(headingText(line.slice(heading[0].length)))}</b>`;
  if (/^ {0,3}([-*_])([ \t]*\1){2,}[ \t]*$/.test(line)) return '———';
  const bullet = /^([ \t]*)[-*+][ \t]+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${renderInline(bullet[2]!)}`;
  return renderInline(line);
}

const HEADING = /^ {0,3}#{1,6}[ \t]+/;
const isBlank = (c: string | undefined) => c === ' ' || c === '\t';

/**
 * A heading's text without its closing `#`s and trailing blanks — what the lazy
 * /(.*?)(?:[ \t]+#+)?[ \t]*$/ kept, found from the end in one pass (the regex retried the
 * rest of the line at every character: quadratic on a long run of tabs).
 */
function headingText(rest: string): string {
  let end = rest.length;
  while (end > 0 && isBlank(rest[end - 1])) end--;
  let k = end;
  while (k > 0 && rest[k - 1] === '#') k--;
  if (k < end && k > 0 && isBlank(rest[k - 1])) {
    end = k;
    while (end > 0 && isBlank(rest[end - 1])) end--;
  }
  return rest.slice(0, end);
}

const SAFE_URL = /^(https?:\/\/|tg:\/\/|mailto:)/i;

/** Characters that can start inline markup; everything between them is escaped as one run. */
const MARKUP = /[`[<*_~|]/g;
const AUTOLINK = /<(https?:\/\/[^\s<>]+)>/y;

/**
 * Inline Markdown of one line: code spans, links, bold, italic, strike, spoiler.
 *
 * Linear in the line's length: every lookahead ("where does this span close?", "where does
 * this link's text end?") is answered from positions found once per line, never by scanning
 * the rest of the line again for each opener — a 4,096-character line of `*a ` took seconds.
 * (A span re-reads its own text, but spans of one kind never nest in each other, so that
 * is a few levels at most.)
 */
export function renderInline(s: string): string {
  const look = new Lookahead(s);
  let out = '';
  let i = 0;
  while (i < s.length) {
    MARKUP.lastIndex = i;
    const next = MARKUP.exec(s)?.index ?? s.length;
    if (next > i) {
      out += escapeHtml(s.slice(i, next));
      i = next;
      continue;
    }
    const ch = s[i]!;

    if (ch === '`') {
      let n = 1;
      while (s[i + n] === '`') n++;
      const run = s.slice(i, i + n);
      const end = s.indexOf(run, i + n);
      if (end !== -1 && s[end + n] !== '`') {
        const code = s.slice(i + n, end);
        const trimmed = code.length > 2 && code.startsWith(' ') && code.endsWith(' ') ? code.slice(1, -1) : code;
        out += `<code>${escapeHtml(trimmed)}</code>`;
        i = end + n;
        continue;
      }
      out += escapeHtml(run);
      i += n;
      continue;
    }

    if (ch === '[') {
      const link = look.link(i);
      if (link && SAFE_URL.test(link.url)) {
        out += `<a href="${escapeAttr(link.url)}">${renderInline(link.text)}</a>`;
        i = link.next;
        continue;
      }
    }

    if (ch === '<') {
      AUTOLINK.lastIndex = i;
      const auto = AUTOLINK.exec(s);
      if (auto) {
        out += `<a href="${escapeAttr(auto[1]!)}">${escapeHtml(auto[1]!)}</a>`;
        i += auto[0].length;
        continue;
      }
    }

    const span = look.span(i);
    if (span) {
      out += `<${span.tag}>${renderInline(s.slice(span.start, span.end))}</${span.tag}>`;
      i = span.next;
      continue;
    }

    out += escapeHtml(ch);
    i++;
  }
  return out;
}

interface Span {
  tag: string;
  start: number;
  end: number;
  next: number;
}

const isSpace = (c: string | undefined) => c === undefined || /\s/.test(c);
const isWordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

const DELIMITERS: Array<[string, string]> = [
  ['**', 'b'],
  ['__', 'b'],
  ['~~', 's'],
  ['||', 'tg-spoiler'],
  ['*', 'i'],
  ['_', 'i'],
];

/** Whether a delimiter at `p` may close a span (the rules depend on `p` alone, not on the opener). */
function closesAt(s: string, delim: string, p: number): boolean {
  if (!s.startsWith(delim, p)) return false;
  const single = delim.length === 1;
  // For a single `*`/`_`, skip doubled delimiters (they belong to bold).
  if (single && (s[p + 1] === delim || s[p - 1] === delim)) return false;
  // Take the last delimiter of a run, so "***x***" nests instead of breaking.
  if (!single && s[p + delim.length] === delim[0]) return false;
  if (isSpace(s[p - 1])) return false;
  if (delim[0] === '_' && isWordChar(s[p + delim.length])) return false;
  return true;
}

/** The first index ≥ `from` where `test` holds, remembered: callers ask with growing `from`. */
class NextIndex {
  private from = -1;
  private at = -1;
  constructor(
    private readonly s: string,
    private readonly test: (c: string) => boolean,
  ) {}

  find(from: number): number {
    // The remembered answer holds for any start between its own start and itself.
    if (from < this.from || from > this.at) {
      let p = from;
      while (p < this.s.length && !this.test(this.s[p]!)) p++;
      this.from = from;
      this.at = p;
    }
    return this.at < this.s.length ? this.at : -1;
  }
}

/** Closing positions and link parts of one line, each found in one pass over it. */
class Lookahead {
  private readonly closers = new Map<string, { at: number[]; k: number }>();
  private readonly bracket: NextIndex;
  private readonly urlEnd: NextIndex;
  private readonly quote: NextIndex;

  constructor(private readonly s: string) {
    this.bracket = new NextIndex(s, (c) => c === ']' || c === '\n');
    this.urlEnd = new NextIndex(s, (c) => c === ')' || c === '>' || /\s/.test(c));
    this.quote = new NextIndex(s, (c) => c === '"');
  }

  /** A delimited span opening at `i` (`**b**`, `__b__`, `*i*`, `_i_`, `~~s~~`, `||spoiler||`), if it closes on this line. */
  span(i: number): Span | null {
    const s = this.s;
    for (const [delim, tag] of DELIMITERS) {
      if (!s.startsWith(delim, i)) continue;
      const start = i + delim.length;
      // An opener is followed by text, not by space (so "2 * 3" stays arithmetic).
      if (isSpace(s[start])) continue;
      // `_` inside a word (snake_case) is not emphasis.
      if (delim[0] === '_' && isWordChar(s[i - 1])) continue;
      // A single `*` that is half of `**` is not an opener of its own.
      if (delim.length === 1 && s[start] === delim) continue;
      const p = this.closer(delim, start + 1);
      if (p >= 0) return { tag, start, end: p, next: p + delim.length };
    }
    return null;
  }

  /** The first position ≥ `from` where `delim` closes a span, or -1. */
  private closer(delim: string, from: number): number {
    let c = this.closers.get(delim);
    if (!c) {
      const at: number[] = [];
      for (let p = this.s.indexOf(delim, 1); p >= 0; p = this.s.indexOf(delim, p + 1)) if (closesAt(this.s, delim, p)) at.push(p);
      this.closers.set(delim, (c = { at, k: 0 }));
    }
    // Openers are met left to right, so the search only ever moves forward.
    while (c.k < c.at.length && c.at[c.k]! < from) c.k++;
    return c.k < c.at.length ? c.at[c.k]! : -1;
  }

  /**
   * `[text](url)`, `[text](<url>)` or `[text](url "title")` at `i`: what
   * /^\[([^\]\n]+)\]\(\s*<?([^\s)>]+)>?(?:\s+"[^"]*")?\s*\)/ matched, read step by step.
   */
  link(i: number): { text: string; url: string; next: number } | null {
    const s = this.s;
    const close = this.bracket.find(i + 1);
    if (close < 0 || close === i + 1 || s[close] !== ']' || s[close + 1] !== '(') return null;
    let k = close + 2;
    while (k < s.length && /\s/.test(s[k]!)) k++;
    if (s[k] === '<') k++;
    const end = this.urlEnd.find(k);
    const urlEnd = end < 0 ? s.length : end;
    if (urlEnd === k) return null;
    const url = s.slice(k, urlEnd);
    k = urlEnd;
    if (s[k] === '>') k++;
    const closeParen = (from: number): number => {
      let p = from;
      while (p < s.length && /\s/.test(s[p]!)) p++;
      return s[p] === ')' ? p + 1 : -1;
    };
    // An optional title: whitespace, then a quoted string.
    let w = k;
    while (w < s.length && /\s/.test(s[w]!)) w++;
    if (w > k && s[w] === '"') {
      const q = this.quote.find(w + 1);
      const next = q < 0 ? -1 : closeParen(q + 1);
      if (next >= 0) return { text: s.slice(i + 1, close), url, next };
    }
    const next = closeParen(k);
    return next >= 0 ? { text: s.slice(i + 1, close), url, next } : null;
  }
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"' };

/** The text rendered HTML shows: tags dropped, the entities escapeHtml writes turned back into their characters. */
export function visibleText(html: string): string {
  return html.replace(/<[^>]*>/g, '').replace(/&(amp|lt|gt|quot);/g, (_, e: string) => ENTITIES[e]!);
}

/** Visible length of rendered HTML as Telegram counts it (tags dropped, entities as one char). */
export function visibleLength(html: string): number {
  return visibleText(html).length;
}
