import type { Command } from './types.js';
import { runMemorySubcommand } from './memory-history.js';

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function createMemoryCommand(): Command {
  return {
    name: 'memory',
    description: 'Show your long-term memory (MEMORY.md); /memory history lists its versions, /memory undo takes back the last change',
    async run(ctx) {
      if (ctx.args.trim()) return runMemorySubcommand(ctx);
      const { inbound, services } = ctx;
      const files = services.memory.forChat(inbound.channel, inbound.chatId);
      const memory = (await files.readMemory()).trim();
      const notes = await files.listNotes();
      const bytes = notes.reduce((a, n) => a + n.bytes, 0);
      const lines = [memory ? `🧠 Long-term memory (MEMORY.md):\n${memory}` : '🧠 Long-term memory is empty. Tell me something worth remembering and I will keep it.'];
      lines.push(
        notes.length === 0
          ? 'Daily notes: none yet.'
          : `Daily notes: ${notes.length} file${notes.length === 1 ? '' : 's'}, ${formatBytes(bytes)} (${notes[0]!.date} … ${notes.at(-1)!.date}).`,
      );
      return lines.join('\n\n');
    },
  };
}
