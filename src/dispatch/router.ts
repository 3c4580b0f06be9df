/**
 * Finds the command a `/name args` message names (core/command-line.ts reads it) and says whether
 * the sender's role lets them run it (each command declares its `access`; nothing else re-checks).
 * Unknown commands get a pointer to /help instead of reaching the model. Which bot a
 * `/name@botname` is for is the channel's to judge (it knows its own name): the Telegram channel
 * never hands on a command addressed to another bot.
 */
import { AppError } from '../core/errors.js';
import type { Role } from '../core/message.js';
import { isManager, type Command } from '../turn/command.js';

export class CommandRouter {
  private readonly commands = new Map<string, Command>();

  /** `adminsManage`: GROUP_ADMINS_MANAGE, for the wording of a refusal. Two commands of one name are refused. */
  constructor(
    commands: Command[],
    private readonly adminsManage = false,
  ) {
    for (const c of commands) {
      if (this.commands.has(c.name)) throw new AppError('internal.bug', { problem: `command /${c.name} is installed twice` });
      this.commands.set(c.name, c);
    }
  }

  /** Null when `role` may run `cmd` with `args`; else the one line the sender gets instead (nothing is run). */
  refusal(cmd: Command, args: string, role: Role): string | null {
    const perArgs = typeof cmd.access === 'function';
    const access = typeof cmd.access === 'function' ? cmd.access(args) : cmd.access;
    if (access === 'everyone' || isManager(role)) return null;
    // Named with its subcommand when only that one is closed ("/reminders cancel").
    const label = perArgs && args ? `/${cmd.name} ${args.split(/\s+/)[0]}` : `/${cmd.name}`;
    return this.adminsManage
      ? `Only the bot's owner or a group admin can use ${label} in this group, so nothing was done. Ask one of them if it is needed.`
      : `Only the bot's owner can use ${label} in this group, so nothing was done. Ask them if it is needed.`;
  }

  list(): Command[] {
    return [...this.commands.values()];
  }

  find(name: string): Command | undefined {
    return this.commands.get(name);
  }
}
