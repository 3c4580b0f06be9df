/**
 * `/memory history` and `/memory undo`: the versions of this chat's MEMORY.md (memory/versions.ts)
 * — when each was made, by what, how many entries it added and removed — and taking the last
 * change back (as a new version, so an undo can itself be undone).
 */
import type { CommandContext } from '../../turn/command.js';
import type { MemoryService } from '../../memory/service.js';
import { formatVersions, undoMemory } from '../../memory/versions.js';

export const MEMORY_USAGE =
  'Use /memory to see your memory, /memory facts to list the saved facts, /memory history to list the versions of MEMORY.md, /memory undo to take back the last change, /memory pending to see changes held for your approval.';

export async function runMemorySubcommand(memory: MemoryService, { inbound, args }: CommandContext): Promise<string> {
  const files = memory.forChat(inbound.channel, inbound.chatId);
  const sub = args.trim().toLowerCase();
  if (sub === 'history') {
    const list = await files.versions.list();
    if (list.length === 0) return 'MEMORY.md has not changed yet, so there are no versions. Each change from now on is kept (the last 50).';
    const lines = formatVersions(list);
    const more = list.length > lines.length ? `\n… and ${list.length - lines.length} older.` : '';
    return `🕘 Versions of MEMORY.md (newest first):\n${lines.join('\n')}${more}\n\n/memory undo takes back the last change.`;
  }
  if (sub === 'undo') {
    const r = await undoMemory(files);
    if (!r.ok) return `Nothing undone: ${r.reason}`;
    return `Undone: MEMORY.md is back to version #${r.restored.n} (${r.restored.source}, ${r.restored.at.replace('T', ' ').slice(0, 16)} UTC), saved as version #${r.version.n}. /memory undo again goes one step further back.`;
  }
  return `Unknown option "${args.trim()}". ${MEMORY_USAGE}`;
}
