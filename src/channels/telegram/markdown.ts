/**
 * The one place that decides where the model's Markdown has fenced code blocks. The splitter
 * and the HTML renderer both read blocks from here, so a chunk boundary can never fall inside
 * a fence the renderer would then see as half open.
 */

export interface TextBlock {
  kind: 'text';
  /** The lines of prose between code blocks (blank lines included). */
  lines: string[];
}

export interface CodeBlock {
  kind: 'code';
  /** The opening fence line as written, e.g. "```ts". */
  open: string;
  /** The fence characters (``` or ~~~, at least three). */
  fence: string;
  /** The info string's first word (language), possibly empty. */
  lang: string;
  lines: string[];
  /** False when the text ended before a closing fence (a truncated answer). */
  closed: boolean;
}

export type Block = TextBlock | CodeBlock;

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * An opening fence line: its fence and language (the info string's first word), or null. The
 * info string may not hold a backtick. Parsed in steps, not by one regex: /…([^\s`]*)[^`]*$/
 * backtracks over every split of a long line that ends in a backtick (quadratic).
 */
function openFence(line: string): { fence: string; lang: string } | null {
  const m = FENCE.exec(line);
  if (!m) return null;
  const info = line.slice(m[0].length);
  if (info.includes('`')) return null;
  const lang = info.replace(/^[ \t]+/, '');
  const end = lang.search(/\s/);
  return { fence: m[1]!, lang: end < 0 ? lang : lang.slice(0, end) };
}

function isClosingFence(line: string, fence: string): boolean {
  const m = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
  return !!m && m[1]![0] === fence[0] && m[1]!.length >= fence.length;
}

/** Splits Markdown into prose and fenced code blocks, in order. CRLF is read as LF. */
export function parseBlocks(markdown: string): Block[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let text: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const m = openFence(line);
    if (!m) {
      text.push(line);
      continue;
    }
    if (text.length > 0) blocks.push({ kind: 'text', lines: text });
    text = [];
    const fence = m.fence;
    const code: string[] = [];
    let closed = false;
    for (i++; i < lines.length; i++) {
      if (isClosingFence(lines[i]!, fence)) {
        closed = true;
        break;
      }
      code.push(lines[i]!);
    }
    blocks.push({ kind: 'code', open: line.trim(), fence, lang: m.lang, lines: code, closed });
  }
  if (text.length > 0) blocks.push({ kind: 'text', lines: text });
  return blocks;
}
