/**
 * Splits a long answer into Telegram messages of at most `limit` characters (4096, counted in
 * UTF-16 units as Telegram counts them). Boundaries are chosen in this order: between
 * paragraphs, then between lines, then between words; only a single word longer than a whole
 * message is cut, and never through a surrogate pair.
 *
 * Code blocks are never cut inside their fence markup: a block that fits stays whole in one
 * chunk; a block longer than a message is cut between its lines and every piece is closed and
 * re-opened with the original fence (and language), so each chunk renders as a proper
 * <pre> block on its own.
 */
import { parseBlocks, type CodeBlock } from './markdown.js';
import { AppError } from '../../core/errors.js';

export const TELEGRAM_MESSAGE_LIMIT = 4096;

export function splitMessage(text: string, limit: number = TELEGRAM_MESSAGE_LIMIT): string[] {
  if (limit < 32) throw new AppError('internal.bug', { problem: `a message limit of ${limit} is too small to hold a code fence` });
  const pieces: string[] = [];
  for (const block of parseBlocks(text)) {
    if (block.kind === 'code') pieces.push(...splitCode(block, limit));
    else for (const para of paragraphs(block.lines)) pieces.push(...splitParagraph(para, limit));
  }
  // Greedy packing: as many whole pieces per message as fit, joined as paragraphs.
  const chunks: string[] = [];
  let current = '';
  for (const piece of pieces) {
    if (current === '') current = piece;
    else if (current.length + 2 + piece.length <= limit) current += `\n\n${piece}`;
    else {
      chunks.push(current);
      current = piece;
    }
  }
  if (current !== '') chunks.push(current);
  return chunks;
}

/** Paragraphs of prose: runs of non-blank lines, trailing spaces kept, edges trimmed of blank lines. */
function paragraphs(lines: string[]): string[] {
  const out: string[] = [];
  let cur: string[] = [];
  for (const line of lines) {
    if (line.trim() === '') {
      if (cur.length > 0) out.push(cur.join('\n'));
      cur = [];
    } else cur.push(line.trimEnd()); // not /\s+$/: quadratic on a long run of spaces
  }
  if (cur.length > 0) out.push(cur.join('\n'));
  return out;
}

function splitParagraph(para: string, limit: number): string[] {
  if (para.length <= limit) return [para];
  const out: string[] = [];
  for (const line of para.split('\n')) {
    if (line.length <= limit) out.push(line);
    else out.push(...splitLine(line, limit));
  }
  return pack(out, '\n', limit);
}

function splitLine(line: string, limit: number): string[] {
  const words = line.split(/ +/).filter((w) => w !== '');
  const parts: string[] = [];
  for (const w of words) {
    if (w.length <= limit) parts.push(w);
    else parts.push(...hardCut(w, limit));
  }
  return pack(parts, ' ', limit);
}

/** Joins consecutive parts with `sep` while the result stays within `limit`. */
function pack(parts: string[], sep: string, limit: number): string[] {
  const out: string[] = [];
  let cur: string | undefined;
  for (const p of parts) {
    if (cur === undefined) cur = p;
    else if (cur.length + sep.length + p.length <= limit) cur += sep + p;
    else {
      out.push(cur);
      cur = p;
    }
  }
  if (cur !== undefined) out.push(cur);
  return out;
}

/** Cuts `s` into pieces of at most `limit` UTF-16 units without splitting a surrogate pair. */
export function hardCut(s: string, limit: number): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    let end = Math.min(s.length, i + limit);
    const last = s.charCodeAt(end - 1);
    if (end < s.length && last >= 0xd800 && last <= 0xdbff) end--;
    out.push(s.slice(i, end));
    i = end;
  }
  return out;
}

function splitCode(block: CodeBlock, limit: number): string[] {
  // Re-opened pieces carry the fence and language only (not a long info string), so the
  // room left for code is always most of the message.
  const fence = block.fence.length <= 16 ? block.fence : block.fence.slice(0, 3);
  const open = `${fence}${block.lang.slice(0, 32)}`;
  const close = fence;
  const whole = [open, ...block.lines, close].join('\n');
  if (whole.length <= limit) return [whole];
  // Room for code in one message once the fences and their newlines are paid for.
  const room = limit - open.length - close.length - 2;
  const lines: string[] = [];
  for (const line of block.lines) {
    if (line.length <= room) lines.push(line);
    else lines.push(...hardCut(line, room));
  }
  return pack(lines, '\n', room).map((body) => `${open}\n${body}\n${close}`);
}
