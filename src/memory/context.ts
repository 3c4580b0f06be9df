/**
 * The `# Memory` block of the system prompt, in the seed's sections and order:
 * `## Long-term Memory` (MEMORY.md), `## Today's Notes`, `## Recent Context` with one
 * `### YYYY-MM-DD` per earlier day, newest first. Empty sections are left out; all empty → "".
 *
 * Budget: over its token budget the block first loses its oldest recent days, then the oldest
 * lines of today's notes. MEMORY.md is always kept whole: it is the curated part.
 */
import type { MemoryFiles } from './files.js';
import type { SessionMessage } from '../sessions/model.js';
import { noteBody, noteLineBody, previousDays } from './notes.js';

export interface MemoryDrop {
  what: string;
  tokens: number;
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
  const longTerm = memoryText!.trim();
  const seen = opts.inConversation;
  const keep = (l: string) => l.trim() !== '' && !(seen && seen.size > 0 && seen.has(noteLineBody(l) ?? ''));
  const today = todayText!.split('\n').filter(keep);
  const recent: Parts['recent'] = [];
  days.forEach((date, i) => {
    const text = dayTexts[i]!;
    const content = (seen && seen.size > 0 ? text.split('\n').filter(keep).join('\n') : text).trim();
    if (content) recent.push({ date, content });
  });
  const parts: Parts = { longTerm, today, recent };
  const drops: MemoryDrop[] = [];
  let text = renderMemory(parts);
  let tokens = opts.count(text);

  while (tokens > opts.budgetTokens && parts.recent.length > 0) {
    const day = parts.recent.pop()!;
    text = renderMemory(parts);
    const after = opts.count(text);
    drops.push({ what: `recent day ${day.date}`, tokens: tokens - after });
    tokens = after;
  }
  if (tokens > opts.budgetTokens && parts.today.length > 0) {
    // Drop the oldest lines of today until the block fits, using per-line counts to find the
    // cut in one pass, then one exact count of the result.
    let excess = tokens - opts.budgetTokens;
    let cut = 0;
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
    drops.push({ what: `${cut} oldest line${cut === 1 ? '' : 's'} of today's notes`, tokens: tokens - after });
    tokens = after;
  }
  return { text, tokens, budget: opts.budgetTokens, drops };
}
