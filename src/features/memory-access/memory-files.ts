/**
 * Tools over the chat's memory files: read/add/rewrite MEMORY.md, read a day's notes, search
 * notes and history. Each tool only ever sees the memory directory of the chat the turn
 * belongs to; a file name from the model goes through resolveInside (no `..`, no absolute
 * path, no symlink out).
 */
import type { MemoryService } from '../../memory/service.js';
import { isOneLine, type MemoryFiles } from '../../memory/files.js';
import type { Tool, ToolContext } from '../../tools/types.js';
import { isAppError } from '../../core/errors.js';
import { replaceSection, withNewline } from '../../memory/files.js';
import { guardedMemoryWrite, MAX_DROP, TurnBaselines } from '../../memory/guard.js';
import type { TurnWrites } from './turn-writes.js';

const DATE = '^\\d{4}-\\d{2}-\\d{2}$';

/** A section name over several lines could open a heading of its own in MEMORY.md. */
const SECTION_NOT_ONE_LINE = 'Error: the section name must be one line (no line breaks), e.g. "Preferences". Nothing was saved.';

/** notes_read asked for a file that is not a daily note or history. */
const NOT_NOTES =
  'Error: refused — notes_read reads daily notes (YYYY-MM-DD.md) and the history log (HISTORY.md, HISTORY-YYYY-MM.md) only. MEMORY.md is read with memory_read.';

/** `writes`: where a change that took effect is noted for the turn (RememberRequest 35 asks). */
export function createMemoryFileTools(memory: MemoryService, writes?: TurnWrites): Tool<any>[] {
  const filesFor = (ctx: ToolContext): MemoryFiles => memory.forChat(ctx.chat.channel, ctx.chat.chatId);
  const baselines = new TurnBaselines();
  /** MEMORY.md as this turn found it, taken before the turn's first change of it (guard.ts). */
  const turnStart = (ctx: ToolContext, files: MemoryFiles): Promise<string | undefined> =>
    ctx.turnId === undefined
      ? Promise.resolve(undefined)
      : baselines.take(ctx.turnId, memory.scopeKey(ctx.chat.channel, ctx.chat.chatId), () => files.readMemory());

  const read: Tool<Record<string, never>> = {
    name: 'memory_read',
    access: 'managers',
    description: 'Read MEMORY.md, the long-term memory about the user.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    async execute(_args, ctx) {
      const text = await filesFor(ctx).readMemory();
      return text.trim() ? text : 'MEMORY.md is empty.';
    },
  };

  const add: Tool<{ fact: string; section?: string }> = {
    name: 'memory_add',
    once: true,
    description: 'Add one durable fact (a preference, name, decision) to MEMORY.md, optionally under a "## section".',
    parameters: {
      type: 'object',
      properties: {
        fact: { type: 'string', minLength: 1, maxLength: 2000, description: 'One sentence.' },
        section: { type: 'string', maxLength: 100, description: 'Section title without ##, e.g. "Preferences".' },
      },
      required: ['fact'],
      additionalProperties: false,
    },
    async execute({ fact, section }, ctx) {
      if (section !== undefined && !isOneLine(section)) return SECTION_NOT_ONE_LINE;
      const files = filesFor(ctx);
      // Taken first: entries added to pad the file do not make a later rewrite's drops look small.
      await turnStart(ctx, files);
      await files.appendMemory(fact, section);
      writes?.wrote(ctx.turnId);
      return `Saved to MEMORY.md${section ? ` under "${section}"` : ''}.`;
    },
  };

  const rewrite: Tool<{ content: string; section?: string }> = {
    name: 'memory_rewrite',
    once: true,
    access: 'managers',
    description: 'Replace all of MEMORY.md, or the body of one "## section", to correct or reorganise it.',
    parameters: {
      type: 'object',
      properties: {
        content: { type: 'string', maxLength: 100_000, description: 'New markdown.' },
        section: { type: 'string', maxLength: 100, description: 'Only this section (title without ##).' },
      },
      required: ['content'],
      additionalProperties: false,
    },
    async execute({ content, section }, ctx) {
      if (section !== undefined && !isOneLine(section)) return SECTION_NOT_ONE_LINE;
      const files = filesFor(ctx);
      // Guarded (guard.ts): a rewrite that loses more than a quarter of the entries — of the file
      // now, or of the file as this turn found it (rewrites one after another) — is refused.
      const res = await guardedMemoryWrite(files, {
        source: 'tool memory_rewrite',
        maxDrop: MAX_DROP,
        log: ctx.log,
        scope: memory.scopeKey(ctx.chat.channel, ctx.chat.chatId),
        baseline: await turnStart(ctx, files),
        next: (cur) => (section ? replaceSection(cur, section, content) : withNewline(content)),
      });
      if (res.refused) {
        const r = res.refused;
        const of = r.sinceTurnStart
          ? `the ${r.prior} entries MEMORY.md had when this turn began (at most ${Math.round(r.maxDrop * 100)} % may go in one turn)`
          : `${r.prior} entries of MEMORY.md (at most ${Math.round(r.maxDrop * 100)} % may go)`;
        return `Refused: this rewrite would drop ${r.dropped} of ${of}; MEMORY.md is unchanged. Keep the existing entries and change only what needs changing.`;
      }
      writes?.wrote(ctx.turnId);
      return section ? `Section "${section}" of MEMORY.md replaced.` : 'MEMORY.md replaced.';
    },
  };

  // Daily notes and history only: MEMORY.md (and its versions, which keep what a rewrite took
  // out) is memory_read's, which a group member is not offered (issue 33 item 2).
  const notes: Tool<{ date?: string; file?: string }> = {
    name: 'notes_read',
    description: "Read one day's conversation notes, or a history file by name (HISTORY.md, or HISTORY-YYYY-MM.md for one month).",
    parameters: {
      type: 'object',
      properties: {
        date: { type: 'string', pattern: DATE, description: 'Day, YYYY-MM-DD.' },
        file: { type: 'string', maxLength: 200, description: 'A daily note (YYYY-MM-DD.md) or history file (HISTORY.md, HISTORY-YYYY-MM.md).' },
      },
      additionalProperties: false,
    },
    async execute({ date, file }, ctx) {
      const files = filesFor(ctx);
      if (!date && !file) return 'Error: give a date (YYYY-MM-DD) or a file name.';
      try {
        const text = date ? await files.readNote(date) : await files.readNoteOrHistory(file!);
        if (text === undefined) return NOT_NOTES;
        return text.trim() ? text : `No notes${date ? ` for ${date}` : ` in ${file}`}.`;
      } catch (err) {
        if (isAppError(err, 'storage.path_escape')) return `Error: refused — ${err.message}. Only files inside the memory folder can be read.`;
        if (isAppError(err, 'storage.not_a_file')) return `Error: refused — ${err.message}.`;
        throw err;
      }
    },
  };

  const search: Tool<{ keyword: string }> = {
    name: 'notes_search',
    description: 'Find a keyword (any case) in daily notes and the history log: matching lines with dates, newest first.',
    parameters: {
      type: 'object',
      properties: { keyword: { type: 'string', minLength: 1, maxLength: 200 } },
      required: ['keyword'],
      additionalProperties: false,
    },
    async execute({ keyword }, ctx) {
      const hits = await filesFor(ctx).search(keyword, 40);
      if (hits.length === 0) return `Nothing found for "${keyword}".`;
      return hits.map((h) => `${h.date} (${h.source}) ${h.line}`).join('\n');
    },
  };

  return [read, add, rewrite, notes, search];
}
