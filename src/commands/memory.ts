import type { Command } from './types.js';
import { isAppError } from '../errors.js';

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** A memory file refused for what it is (a link out, a FIFO): said in one line, nothing read. */
function refusal(err: unknown): string | null {
  if (isAppError(err, 'storage.path_escape') || isAppError(err, 'storage.not_a_file')) {
    return `🧠 Long-term memory could not be shown: ${err.message}. The bot owner can replace it with a plain file.`;
  }
  return null;
}

export function createMemoryCommand(): Command {
  return {
    name: 'memory',
    description: 'Show your long-term memory (MEMORY.md) and how many daily notes exist',
    async run({ inbound, services }) {
      const files = services.memory.forChat(inbound.channel, inbound.chatId);
      let shown: string;
      try {
        const memory = (await files.readMemory()).trim();
        shown = memory ? `🧠 Long-term memory (MEMORY.md):\n${memory}` : '🧠 Long-term memory is empty. Tell me something worth remembering and I will keep it.';
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
      const lines = [shown];
      lines.push(
        notes.length === 0
          ? 'Daily notes: none yet.'
          : `Daily notes: ${notes.length} file${notes.length === 1 ? '' : 's'}, ${formatBytes(bytes)} (${notes[0]!.date} … ${notes.at(-1)!.date}).`,
      );
      return lines.join('\n\n');
    },
  };
}
