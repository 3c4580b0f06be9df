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
  const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
  if (heading) return `<b>${renderInline(heading[1]!)}</b>`;
  if (/^ {0,3}([-*_])([ \t]*\1){2,}[ \t]*$/.test(line)) return '———';
  const bullet = /^([ \t]*)[-*+][ \t]+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${renderInline(bullet[2]!)}`;
  return renderInline(line);
}

const SAFE_URL = /^(https?:\/\/|tg:\/\/|mailto:)/i;

/** Inline Markdown of one line: code spans, links, bold, italic, strike, spoiler. */
export function renderInline(s: string): string {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const ch = s[i]!;

    if (ch === '`') {
      const run = /^`+/.exec(s.slice(i))![0];
      const end = s.indexOf(run, i + run.length);
      if (end !== -1 && s[end + run.length] !== '`') {
        const code = s.slice(i + run.length, end);
        const trimmed = code.length > 2 && code.startsWith(' ') && code.endsWith(' ') ? code.slice(1, -1) : code;
        out += `<code>${escapeHtml(trimmed)}</code>`;
        i = end + run.length;
        continue;
      }
      out += escapeHtml(run);
      i += run.length;
      continue;
    }

    if (ch === '[') {
      const link = /^\[([^\]\n]+)\]\(\s*<?([^\s)>]+)>?(?:\s+"[^"]*")?\s*\)/.exec(s.slice(i));
      if (link && SAFE_URL.test(link[2]!)) {
        out += `<a href="${escapeAttr(link[2]!)}">${renderInline(link[1]!)}</a>`;
        i += link[0].length;
        continue;
      }
    }

    if (ch === '<') {
      const auto = /^<(https?:\/\/[^\s<>]+)>/.exec(s.slice(i));
      if (auto) {
        out += `<a href="${escapeAttr(auto[1]!)}">${escapeHtml(auto[1]!)}</a>`;
        i += auto[0].length;
        continue;
      }
    }

    const span = matchSpan(s, i);
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

/** A delimited span opening at `i` (`**b**`, `__b__`, `*i*`, `_i_`, `~~s~~`, `||spoiler||`), if it closes on this line. */
function matchSpan(s: string, i: number): Span | null {
  const candidates: Array<[string, string]> = [
    ['**', 'b'],
    ['__', 'b'],
    ['~~', 's'],
    ['||', 'tg-spoiler'],
    ['*', 'i'],
    ['_', 'i'],
  ];
  for (const [delim, tag] of candidates) {
    if (!s.startsWith(delim, i)) continue;
    const start = i + delim.length;
    // An opener is followed by text, not by space (so "2 * 3" stays arithmetic).
    if (isSpace(s[start])) continue;
    // `_` inside a word (snake_case) is not emphasis.
    if (delim[0] === '_' && isWordChar(s[i - 1])) continue;
    const single = delim.length === 1;
    // A single `*` that is half of `**` is not an opener of its own.
    if (single && s[start] === delim) continue;
    for (let p = start + 1; p <= s.length - delim.length; p++) {
      if (!s.startsWith(delim, p)) continue;
      // For a single `*`/`_`, skip doubled delimiters (they belong to bold).
      if (single && (s[p + 1] === delim || s[p - 1] === delim)) continue;
      // Take the last delimiter of a run, so "***x***" nests instead of breaking.
      if (!single && s[p + delim.length] === delim[0]) continue;
      if (isSpace(s[p - 1])) continue;
      if (delim[0] === '_' && isWordChar(s[p + delim.length])) continue;
      return { tag, start, end: p, next: p + delim.length };
    }
  }
  return null;
}

/** Visible length of rendered HTML as Telegram counts it (tags dropped, entities as one char). */
export function visibleLength(html: string): number {
  return html.replace(/<[^>]*>/g, '').replace(/&(amp|lt|gt|quot);/g, '_').length;
}
