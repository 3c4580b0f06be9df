import type { Logger } from '../core/log.js';
import type { Session } from '../sessions/model.js';
import type { SessionWriter } from '../sessions/writer.js';
import type { InboundMessage, Role } from '../core/message.js';
import type { OutboundDocument, ReplyButton } from '../core/channel.js';

/**
 * What one run of a command gets: this message and its chat, nothing of the daemon. What a
 * command needs beyond that (the reminders, the index …) it was given when its feature was built.
 */
export interface CommandContext {
  inbound: InboundMessage;
  session: Session;
  /** The command's writes to `session` (/new clears it, /compact compacts it). */
  writes: SessionWriter;
  args: string;
  /** The sender's role, as the channel decided it (unset counts as `member`). */
  role: Role;
  log: Logger;
  /** Sends a file to the chat, on channels that can (Telegram); absent elsewhere. */
  document?: ((doc: OutboundDocument) => Promise<void>) | undefined;
  /** Puts buttons under the command's reply, on channels that show them (Telegram); absent elsewhere. */
  buttons?: ((rows: ReplyButton[][]) => void) | undefined;
}

/**
 * Who may run a command: `everyone`, or `managers` — the chat's owners (the bot's owners, the
 * terminal, the user of a private chat) and, with GROUP_ADMINS_MANAGE=on, a group's admins.
 */
export type CommandAccess = 'everyone' | 'managers';

/** Owners and (where GROUP_ADMINS_MANAGE=on lets the channel say so) group admins. */
export function isManager(role: Role): boolean {
  return role === 'owner' || role === 'admin';
}

/** A slash command, handled before the pipeline; returns the reply text. */
export interface Command {
  name: string;
  description: string;
  /**
   * Who may run it; a function when that depends on the arguments (/reminders lists for
   * everyone, /reminders cancel is for managers). The router enforces it before `run`.
   */
  access: CommandAccess | ((args: string) => CommandAccess);
  run(ctx: CommandContext): Promise<string>;
}
