import type { Command } from './types.js';

export function createNewCommand(): Command {
  return {
    name: 'new',
    description: 'Start a new conversation (memory files are kept)',
    async run({ session, services }) {
      await services.sessions.clearMessages(session.id);
      return 'Session cleared. Your memory is kept; we start a fresh conversation.';
    },
  };
}
