/**
 * Recognises `/name args` and `/name@botname args` and finds the command. Unknown commands get a
 * pointer to /help instead of reaching the model.
 */
import type { Command } from './types.js';

export interface ParsedCommand {
  name: string;
  args: string;
}

export function parseCommand(text: string): ParsedCommand | null {
  const m = /^\/([A-Za-z0-9_]{1,32})(?:@[A-Za-z0-9_]+)?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return null;
  return { name: m[1]!.toLowerCase(), args: (m[2] ?? '').trim() };
}

export class CommandRouter {
  private readonly commands = new Map<string, Command>();

  constructor(commands: Command[]) {
    for (const c of commands) this.commands.set(c.name, c);
  }

  list(): Command[] {
    return [...this.commands.values()];
  }

  find(name: string): Command | undefined {
    return this.commands.get(name);
  }
}
