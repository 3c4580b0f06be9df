/**
 * `/stop` ends the chat's running answer and skips its waiting messages. It is handled by the
 * intake as soon as it arrives, outside the chat's queue (dispatch/stop.ts): it must not wait
 * behind the turn it stops. This entry lists it (/help, Telegram's menu) and answers the one
 * case that reaches the queue: a /stop journaled before a restart, when nothing runs any more.
 */
import type { Command } from '../../turn/command.js';

export function createStopCommand(): Command {
  return {
    name: 'stop',
    description: 'Stop the answer being written (and skip messages waiting behind it)',
    // Anyone; in a group a member stops only the answer to their own message (dispatch/stop.ts).
    access: 'everyone',
    async run() {
      return 'Nothing to stop.';
    },
  };
}
