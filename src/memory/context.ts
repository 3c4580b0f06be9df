/**
 * The `# Memory` block of the system prompt, in the seed's sections and order:
 * `## Long-term Memory` (MEMORY.md), `## Today's Notes`, `## Recent Context` with one
 * `### YYYY-MM-DD` per earlier day, newest first. Empty sections are left out; all empty → "".
 *
 * Budget: over its token budget the block first loses its oldest recent days, then the oldest
 * lines of today's notes. MEMORY.md is always kept whole: it is the curated part.
 *
 * A busy day's note grows to thousands of lines (megabytes) while the budget holds a few
 * hundred. Counting all of it on every turn cost the one event loop ~0.6 s per turn at 10,000
 * lines (and pushed every line through the token cache), so a part far out of the budget's
 * reach is cut before the exact trimming: the work per turn follows the budget, not the notes.
 */
import { createHash } from 'node:crypto';
import type { MemoryFiles } from './files.js';
import type { SessionMessage } from '../sessions/model.js';
import { noteBody, noteLineBody, previousDays } from './notes.js';

export interface MemoryDrop {
  what: string;
  tokens: number;
  /** The figure is estimated (text far over the budget is not counted, see REACH). */
  approximate?: boolean;
}

/**
 * Newest lines of a note costing more than REACH × the budget can never be in the block (the
 * newer ones alone fill it): they are cut without being counted. Between one and REACH ×
 * budget the exact trimming decides, so an ordinary day is trimmed exactly as before.
 */
const REACH = 2;

/** How many of `lines`, newest first, fit in `limit` tokens, with their tokens and characters. */
function newestWithin(lines: string[], limit: number, count: (t: string) => number): { kept: number; tokens: number; chars: number } {
  let tokens = 0;
  let chars = 0;
  let kept = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const c = count(lines[i]!);
    if (tokens + c > limit) break;
    tokens += c;
    chars += lines[i]!.length + 1;
    kept++;
  }
  return { kept, tokens, chars };
}

/** Tokens of `chars` characters of note text, at the rate measured on the part that was counted. */
function estimate(chars: number, measured: { tokens: number; chars: number }): number {
  return Math.round((chars * Math.max(1, measured.tokens)) / Math.max(1, measured.chars));
}

export interface MemoryBlock {
  text: string;
  tokens: number;
  budget: number;
  drops: MemoryDrop[];
}

export interface MemoryBlockOptions {
  today: string;
  recentDays: number;
  budgetTokens: number;
  count: (text: string) => number;
  /**
   * Note bodies (see `conversationNoteBodies`) of the exchanges still present as messages in
   * the conversation: their lines are left out, so no exchange reaches the model twice. Once
   * compaction removes those messages their lines count again. The files are not changed.
   */
  inConversation?: ReadonlySet<string> | undefined;
  /**
   * Keys (see `noteKey`) of the exchanges the conversation's `[Conversation summary]` stands
   * for: their lines are left out too, so the model does not get the same exchanges as a
   * summary and again as note lines after every compaction. A truncation (no summary) records
   * none, so the lines of what it dropped count again.
   */
  summarized?: ReadonlySet<string> | undefined;
  /**
   * How a line is shown (MEMORY.md, today's and the recent days' notes): a line stating a value
   * that a correction replaced gets the current value after it (index/search/superseded.ts).
   * The files are not changed: the notes only grow, and what was said stays what was said.
   */
  mark?: ((line: string) => string) | undefined;
}

/**
 * A short, stable key of a note body (48 bits of SHA-1, base64url): what a summary message
 * keeps (`SessionMessage.covers`) of each exchange it replaced, so the session file holds a
 * few bytes per exchange instead of the text again.
 */
export function noteKey(body: string): string {
  return createHash('sha1').update(body).digest('base64url').slice(0, 8);
}

/** The keys a session's `[Conversation summary]` messages cover (empty when there is none). */
export function summarizedNoteKeys(messages: readonly SessionMessage[]): Set<string> {
  const out = new Set<string>();
  for (const m of messages) if (m.role === 'system' && m.covers) for (const k of m.covers) out.add(k);
  return out;
}

/**
 * The note body of each answered exchange in `messages`: a user message and the final answer
 * (the last assistant message without tool calls) before the next user message — exactly what
 * MemoryPersist (50) wrote for it, minus the time.
 */
export function conversationNoteBodies(messages: readonly SessionMessage[]): Set<string> {
  const out = new Set<string>();
  let user: string | undefined;
  let answer: string | undefined;
  const flush = () => {
    if (user !== undefined && answer !== undefined) out.add(noteBody(user, answer));
  };
  for (const m of messages) {
    if (m.role === 'user') {
      flush();
      user = m.content;
      answer = undefined;
    } else if (m.role === 'assistant' && !(m.toolCalls && m.toolCalls.length > 0)) answer = m.content;
  }
  flush();
  return out;
}

interface Parts {
  longTerm: string;
  today: string[];
  recent: Array<{ date: string; content: string }>;
}

/**
 * MEMORY.md is free-form markdown that may quote what users said. Its headings are pushed down
 * two levels so nothing in it can open a `#` or `##` section of the prompt (a line reading
 * "# Memory" or "## Today's Notes" inside MEMORY.md stays a sub-heading of Long-term Memory).
 */
export function nestHeadings(markdown: string): string {
  return markdown.replace(/^(#{1,6})(?=\s)/gm, (h) => '#'.repeat(Math.min(6, h.length + 2)));
}

export function renderMemory(p: Parts): string {
  const sections: string[] = [];
  if (p.longTerm) sections.push(`## Long-term Memory\n${nestHeadings(p.longTerm)}`);
  if (p.today.length > 0) sections.push(`## Today's Notes\n${p.today.join('\n')}`);
  if (p.recent.length > 0) {
    sections.push(`## Recent Context\n${p.recent.map((d) => `### ${d.date}\n${d.content}`).join('\n\n')}`);
  }
  return sections.length > 0 ? `# Memory\n\n${sections.join('\n\n')}` : '';
}

export async function buildMemoryBlock(files: MemoryFiles, opts: MemoryBlockOptions): Promise<MemoryBlock> {
  // Read together: one round of file reads, not eight in a row, on every turn.
  const days = previousDays(opts.today, opts.recentDays);
  const [memoryText, todayText, ...dayTexts] = await Promise.all([files.readMemory(), files.readNote(opts.today), ...days.map((d) => files.readNote(d))]);
  const mark = opts.mark;
  const marked = (text: string) => (mark ? text.split('\n').map(mark).join('\n') : text);
  const longTerm = marked(memoryText!.trim());
  const seen = opts.inConversation;
  const summarized = opts.summarized;
  const filtering = (seen !== undefined && seen.size > 0) || (summarized !== undefined && summarized.size > 0);
  const keep = (l: string) => {
    if (l.trim() === '') return false;
    if (!filtering) return true;
    const body = noteLineBody(l);
    if (body === undefined) return true;
    return !(seen?.has(body) || (summarized && summarized.size > 0 && summarized.has(noteKey(body))));
  };
  const reach = opts.budgetTokens * REACH;
  const drops: MemoryDrop[] = [];
  const allToday = todayText!.split('\n').filter(keep);
  const near = newestWithin(allToday, reach, opts.count);
  const farLines = allToday.length - near.kept;
  // Marked after the far cut: the work follows the budget here too.
  const nearLines = farLines > 0 ? allToday.slice(farLines) : allToday;
  const today = mark ? nearLines.map(mark) : nearLines;
  const farTokens =
    farLines > 0
      ? estimate(
          allToday.slice(0, farLines).reduce((n, l) => n + l.length + 1, 0),
          near,
        )
      : 0;
  const recent: Parts['recent'] = [];
  days.forEach((date, i) => {
    const text = dayTexts[i]!;
    const content = (filtering ? text.split('\n').filter(keep).join('\n') : text).trim();
    if (content) recent.push({ date, content });
  });
  // A day that alone is out of reach goes, and every older day before it (oldest go first).
  for (let i = 0; i < recent.length; i++) {
    const lines = recent[i]!.content.split('\n');
    const w = newestWithin(lines, reach, opts.count);
    if (w.kept === lines.length) continue;
    for (const day of recent.splice(i).reverse()) drops.push({ what: `recent day ${day.date}`, tokens: estimate(day.content.length, w), approximate: true });
    break;
  }
  // Marked once the days out of reach are gone, before the exact trimming counts them.
  if (mark) for (const day of recent) day.content = marked(day.content);
  const parts: Parts = { longTerm, today, recent };
  let text = renderMemory(parts);
  let tokens = opts.count(text);

  while (tokens > opts.budgetTokens && parts.recent.length > 0) {
    const day = parts.recent.pop()!;
    text = renderMemory(parts);
    const after = opts.count(text);
    drops.push({ what: `recent day ${day.date}`, tokens: tokens - after });
    tokens = after;
  }
  let cut = 0;
  let cutTokens = 0;
  if (tokens > opts.budgetTokens && parts.today.length > 0) {
    // Drop the oldest lines of today until the block fits, using per-line counts to find the
    // cut in one pass, then one exact count of the result.
    let excess = tokens - opts.budgetTokens;
    while (cut < parts.today.length && excess > 0) {
      excess -= opts.count(parts.today[cut]!) + 1;
      cut++;
    }
    parts.today = parts.today.slice(cut);
    text = renderMemory(parts);
    let after = opts.count(text);
    // The per-line estimate can fall short (joins, BPE merges): finish with exact counts.
    while (after > opts.budgetTokens && parts.today.length > 0) {
      parts.today.shift();
      cut++;
      text = renderMemory(parts);
      after = opts.count(text);
    }
    cutTokens = tokens - after;
    tokens = after;
  }
  const lines = farLines + cut;
  if (lines > 0) {
    drops.push({
      what: `${lines} oldest line${lines === 1 ? '' : 's'} of today's notes`,
      tokens: farTokens + cutTokens,
      ...(farLines > 0 ? { approximate: true } : {}),
    });
  }
  return { text, tokens, budget: opts.budgetTokens, drops };
}
