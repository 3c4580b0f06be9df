/**
 * The per-chat commands of `npm run memory`: `versions` and `restore` (MEMORY.md versions,
 * memory/versions.ts), `purge` (every trace of one chat, features/privacy/purge.ts) and `reminders`
 * (a chat's pending reminders, listed and cancelled: features/reminders/cli.ts) and `import`
 * (another assistant's memory or a membot export read into the chat: cli/import.ts).
 */
import type { Config } from '../config/env.js';
import type { Logger } from '../core/log.js';
import { FileMemoryService } from '../memory/file-memory.js';
import { formatVersions, restoreMemory } from '../memory/versions.js';
import type { CliIo } from '../core/cli-io.js';
import { parseChatKey } from '../core/chat.js';

export const CHAT_COMMANDS = ['versions', 'restore', 'purge', 'reminders', 'import'];

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

export async function runChatCommand(cmd: string, args: string[], config: Config, log: Logger, io: CliIo): Promise<number> {
  const chatArg = flag(args, '--chat');
  const chat = chatArg ? parseChatKey(chatArg) : undefined;
  if (!chat) {
    io.err(`${cmd} needs --chat CHANNEL:ID, e.g. npm run memory -- ${cmd} --chat telegram:123`);
    return 2;
  }
  const memory = FileMemoryService.inWorkspace(config.workspaceDir, config.memoryScope);
  const files = memory.forChat(chat.channel, chat.chatId);
  switch (cmd) {
    case 'versions': {
      const list = await files.versions.list();
      if (list.length === 0) {
        io.out(`No versions of MEMORY.md for ${chatArg} yet (the file has not changed since versions are kept).`);
        return 0;
      }
      for (const line of formatVersions(list, Number.MAX_SAFE_INTEGER)) io.out(line);
      io.out(`Restore one with: npm run memory -- restore --chat ${chatArg} --version N`);
      return 0;
    }
    case 'restore': {
      const n = Number(flag(args, '--version') ?? NaN);
      if (!Number.isInteger(n) || n <= 0) {
        io.err(`restore needs --version N (a number from: npm run memory -- versions --chat ${chatArg})`);
        return 2;
      }
      const r = await restoreMemory(files, n);
      if (!r.ok) {
        io.err(r.reason.replace('/memory history', `npm run memory -- versions --chat ${chatArg}`));
        return 1;
      }
      io.out(
        `MEMORY.md of ${chatArg} is now version #${n} (${r.restored.source}, ${r.restored.at.replace('T', ' ').slice(0, 16)} UTC), saved as version #${r.version.n}.`,
      );
      return 0;
    }
    case 'reminders': {
      const { runReminders } = await import('../features/reminders/cli.js');
      return runReminders(chat, chatArg!, args, config, log, io);
    }
    case 'purge': {
      const { runPurge } = await import('./purge.js');
      return runPurge(chat, args, config, log, io);
    }
    case 'import': {
      const { runImport } = await import('./import.js');
      return runImport(args, config, log, io);
    }
    default:
      io.err(`unknown command "${cmd}"`);
      return 2;
  }
}
