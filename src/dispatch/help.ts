import type { Command } from '../turn/command.js';

export function createHelpCommand(list: () => Command[]): Command {
  return {
    name: 'help',
    description: 'Show what the bot can do and its commands',
    access: 'everyone',
    async run() {
      const lines = list().map((c) => `/${c.name} — ${c.description}`);
      return ['I am your assistant with a memory: just write to me. Commands:', ...lines].join('\n');
    },
  };
}
