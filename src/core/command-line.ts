/**
 * The grammar of a slash command, `/name args` or `/name@botname args`: read by the intake (which
 * command to run), /stop's fast path, and a channel (a command addressed to another bot).
 */

export interface ParsedCommand {
  name: string;
  args: string;
  /** The bot named after the command (`/status@membot` → `membot`), as written; absent without one. */
  bot?: string;
}

export function parseCommand(text: string): ParsedCommand | null {
  const m = /^\/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]+))?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return null;
  return { name: m[1]!.toLowerCase(), args: (m[3] ?? '').trim(), ...(m[2] ? { bot: m[2] } : {}) };
}
