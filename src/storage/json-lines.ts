/**
 * Reading and thinning JSON-lines text (the session log, the intake journal) for the stores that
 * keep one: a purge drops a chat's lines without the caller parsing them.
 */

/** Each line of the text with its parsed value (undefined for a blank or unreadable line). */
export function parseJsonLines(text: string): Array<{ raw: string; line: any }> {
  return text.split('\n').map((raw) => {
    try {
      return { raw, line: raw.trim() ? JSON.parse(raw) : undefined };
    } catch {
      return { raw, line: undefined };
    }
  });
}

/**
 * The text without the lines `drop` accepts (called in order, so it may remember what it saw);
 * blank and unreadable lines are kept. `dropped`: how many went.
 */
export function dropJsonLines(text: string, drop: (line: any) => boolean): { text: string; dropped: number } {
  const lines = parseJsonLines(text);
  const kept = lines.filter((l) => l.line === undefined || !drop(l.line));
  return { text: kept.map((l) => l.raw).join('\n'), dropped: lines.length - kept.length };
}
