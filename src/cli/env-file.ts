/**
 * `.env` as `npm run setup` writes it: the lines it sets are replaced where they stand, every
 * other line (settings, comments, blank lines) is kept as it was. (setup.ts writes the file
 * atomically as 0600: it holds the API key and the bot token.)
 * A new file starts from .env.example, so each setting keeps its explanation beside it.
 */
import { readFile } from 'node:fs/promises';
import dotenv from 'dotenv';
import { AppError } from '../core/errors.js';

export async function readTextIfAny(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The settings of a .env text, as dotenv reads them. */
export function parseEnv(text: string | undefined): Record<string, string> {
  return text ? dotenv.parse(text) : {};
}

/** A value as dotenv reads it back unchanged: bare when plain, else quoted. */
export function formatValue(name: string, value: string): string {
  if (/^[A-Za-z0-9_\-.:/@,+=~%]*$/.test(value)) return value;
  if (!/[\r\n]/.test(value)) {
    if (!value.includes("'")) return `'${value}'`;
    if (!value.includes('"') && !value.includes('\\')) return `"${value}"`;
    if (!value.includes('`')) return `\`${value}\``;
  }
  throw new AppError('config.invalid', { problem: `${name} cannot be written to .env: it holds a line break, or all three kinds of quotes` });
}

/**
 * `text` with each of `values` set: its active line (`NAME=…`, `export NAME=…`) replaced in
 * place, else its commented example (`# NAME=…`), else a line appended. Other lines are kept.
 */
export function mergeEnv(text: string, values: Record<string, string>): string {
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  for (const [name, value] of Object.entries(values)) {
    const line = `${name}=${formatValue(name, value)}`;
    const active = lines.findIndex((l) => new RegExp(`^\\s*(?:export\\s+)?${name}\\s*=`).test(l));
    const example = lines.findIndex((l) => new RegExp(`^#\\s?${name}=`).test(l));
    if (active >= 0) {
      lines[active] = line;
      // A second active line would win when read (dotenv takes the first; a shell the last): drop it.
      for (let i = lines.length - 1; i > active; i--) if (new RegExp(`^\\s*(?:export\\s+)?${name}\\s*=`).test(lines[i]!)) lines.splice(i, 1);
    } else if (example >= 0) lines.splice(example + 1, 0, line);
    else lines.push(line);
  }
  return `${lines.join('\n')}\n`;
}
