/**
 * The database's health in one line, as /status and `npm run doctor` show it: where it is
 * (`host:port/database`, never the password), whether it answers, and since when.
 */
import type { Health } from './database.js';

/** `at` as `YYYY-MM-DD HH:MM UTC`. */
function minute(at: number): string {
  return `${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function healthLine(where: string, h: Health): string {
  if (h.state === 'up') return `PostgreSQL at ${where}: up since ${minute(h.since)}`;
  if (h.state === 'down') return `PostgreSQL at ${where}: DOWN since ${minute(h.since)}${h.error ? ` (${h.error})` : ''}; waiting for it, retrying`;
  return `PostgreSQL at ${where}: not asked yet`;
}
