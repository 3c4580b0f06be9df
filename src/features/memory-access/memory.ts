/**
 * /memory [N]: MEMORY.md, the chat's facts (memory-facts.ts) and the daily notes on disk. A long
 * MEMORY.md is shown in parts of about 3,500 characters (one Telegram message each, cut between
 * lines), part N on request, so a 1 MB file is one reply that says how to see the rest, not 250
 * messages; the facts fill what the first part leaves of the message.
 */
import type { Command } from '../../turn/command.js';
import { runMemorySubcommand } from './memory-history.js';
import { factsOverview, listFacts, type MemoryDeps } from './memory-facts.js';
import { isAppError } from '../../core/errors.js';
import { runPendingSubcommand } from './pending.js';

export const MEMORY_PART_CHARS = 3_500;
/** One reply of /memory at most: a Telegram message (4,096) with room to spare. */
const REPLY_CHARS = 4_000;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * Cuts `text` into parts of at most `size` characters, after a line break when one lies in the
 * second half of the part, never inside a surrogate pair. Each cut looks back over at most
 * half a part, so the whole split is linear in the text.
 */
export function memoryParts(text: string, size = MEMORY_PART_CHARS): string[] {
  const parts: string[] = [];
  let i = 0;
  while (i < text.length) {
    let end = Math.min(text.length, i + size);
    if (end < text.length) {
      const from = i + Math.floor(size / 2);
      const nl = text.slice(from, end).lastIndexOf('\n');
      if (nl >= 0) end = from + nl + 1;
      else if (/[\uD800-\uDBFF]/.test(text[end - 1]!)) end--;
    }
    parts.push(text.slice(i, end));
    i = end;
  }
  return parts;
}

/** A memory file refused for what it is (a link out, a FIFO): said in one line, nothing read. */
function refusal(err: unknown): string | null {
  if (isAppError(err, 'storage.path_escape') || isAppError(err, 'storage.not_a_file')) {
    return `🧠 Long-term memory could not be shown: ${err.message}. The bot owner can replace it with a plain file.`;
  }
  return null;
}

function showMemory(memory: string, args: string): string {
  if (!memory) return '🧠 Long-term memory is empty. Tell me something worth remembering and I will keep it.';
  const parts = memoryParts(memory);
  const wanted = args.trim() === '' ? 1 : Number(args.trim());
  if (!Number.isInteger(wanted) || wanted < 1) return `"/memory ${args.trim()}" — give a part number, e.g. /memory 2.`;
  if (wanted > parts.length) return `MEMORY.md has ${parts.length} part${parts.length === 1 ? '' : 's'}; send /memory ${parts.length} for the last one.`;
  if (parts.length === 1) return `🧠 Long-term memory (MEMORY.md):\n${memory}`;
  const size = memory.length.toLocaleString('en-US');
  const where =
    wanted < parts.length
      ? `MEMORY.md is ${size} characters; this is part ${wanted} of ${parts.length}. Send /memory ${wanted + 1} for the next part.`
      : `MEMORY.md is ${size} characters; this is the last part, ${wanted} of ${parts.length}.`;
  return `🧠 Long-term memory (MEMORY.md), part ${wanted} of ${parts.length}:\n${parts[wanted - 1]!.trimEnd()}\n\n(${where})`;
}

export function createMemoryCommand(deps: MemoryDeps): Command {
  return {
    name: 'memory',
    description:
      'Show your long-term memory (MEMORY.md and saved facts); /memory pending lists changes held for your approval, /memory facts lists every fact, /memory history lists its versions, /memory undo takes back the last change',
    // MEMORY.md word for word is the core of what /export gives; in a group it is the group's shared memory.
    access: 'managers',
    async run(ctx) {
      const { inbound, args } = ctx;
      const facts = /^facts(?:\s+(.*))?$/is.exec(args.trim());
      if (facts) return listFacts(deps, ctx, (facts[1] ?? '').trim());
      const held = /^(pending|approve|reject)(?:\s+(\S*))?\s*$/i.exec(args.trim());
      if (held && deps.pending) return runPendingSubcommand(deps.pending, inbound, held[1]!.toLowerCase(), held[2] ?? '', ctx.log);
      // "/memory 2" is a part of a long file; any other word is a subcommand (history, undo).
      if (args.trim() && !/^\d+$/.test(args.trim())) return runMemorySubcommand(deps.memory, ctx);
      const files = deps.memory.forChat(inbound.channel, inbound.chatId);
      let shown: string;
      try {
        shown = showMemory((await files.readMemory()).trim(), args);
      } catch (err) {
        const refused = refusal(err);
        if (!refused) throw err;
        shown = refused;
      }
      const notes = await files.listNotes().catch((err: unknown) => {
        if (refusal(err)) return [];
        throw err;
      });
      const bytes = notes.reduce((a, n) => a + n.bytes, 0);
      const notesLine =
        notes.length === 0
          ? 'Daily notes: none yet.'
          : `Daily notes: ${notes.length} file${notes.length === 1 ? '' : 's'}, ${formatBytes(bytes)} (${notes[0]!.date} … ${notes.at(-1)!.date}).`;
      // With the first part (or the whole file): the facts, in what the message has left.
      if (args.trim() !== '' && Number(args.trim()) !== 1) return [shown, notesLine].join('\n\n');
      return [shown, factsOverview(deps, ctx, REPLY_CHARS - shown.length - notesLine.length - 4), notesLine].join('\n\n');
    },
  };
}
