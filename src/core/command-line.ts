/**
 * The grammar of a slash command, `/name args` or `/name@botname args`: read by the intake (which
 * command to run), /stop's fast path, and a channel (a command addressed to another bot; /stop,
 * which it answers without "typing…").
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

/** The message is /stop (also /stop@bot, with or without words after it): answered at once, outside the chat's queue. */
export function isStop(text: string): boolean {
  return parseCommand(text)?.name === 'stop';
}
