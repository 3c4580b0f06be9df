/**
 * Taking words out of what a store keeps (/forget): each store is given the words as a
 * `Redaction` and takes them out of its own records — lines of a log, a file set aside, rows —
 * so no caller reads or parses what a store keeps. features/privacy/phrase.ts's `Phrase` is one.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { withFileLock, writeFileAtomic } from './atomic.js';

export interface Redaction {
  /** True when the text holds the words. */
  test(text: string): boolean;
  /** The text with every occurrence of the words replaced by a mark. */
  redact(text: string): string;
}

/** Redacts the words in every string of a JSON value. */
export function redactValue(v: unknown, words: Redaction): unknown {
  if (typeof v === 'string') return words.test(v) ? words.redact(v) : v;
  if (Array.isArray(v)) return v.map((x) => redactValue(x, words));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, redactValue(x, words)]));
  return v;
}

/**
 * A JSON-lines text with the words redacted in every string of the lines `mine` accepts (one
 * chat's lines of a shared log); a torn line that holds them is dropped. For the stores that keep
 * JSON lines (the session log, the intake journal).
 */
export function redactJsonLines(text: string, words: Redaction, mine: (line: any) => boolean = () => true): string {
  return text
    .split('\n')
    .flatMap((line) => {
      if (!line.trim()) return [line];
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        return words.test(line) ? [] : [line];
      }
      if (!mine(parsed)) return [line];
      const next = JSON.stringify(redactValue(parsed, words));
      return next === JSON.stringify(parsed) ? [line] : [next];
    })
    .join('\n');
}

/**
 * A text file with the words redacted, rewritten atomically under its lock; true when it held
 * them. A file that cannot be read (gone, a folder) is left.
 */
export function redactFile(file: string, words: Redaction): Promise<boolean> {
  return withFileLock(file, async () => {
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined || !words.test(text)) return false;
    const next = words.redact(text);
    if (next === text) return false;
    await writeFileAtomic(file, next);
    return true;
  });
}

/** The files of a folder (not sub-folders, no link followed into one), sorted; none when it does not exist. */
export async function filesIn(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true }))
      .filter((d) => d.isFile())
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}

/**
 * The words redacted in every file of a folder (`redactFile`) but those `skip` names; returns
 * the files that held them, named relative to `base` (the workspace).
 */
export async function redactFolder(dir: string, base: string, words: Redaction, skip: (name: string) => boolean = () => false): Promise<string[]> {
  const changed: string[] = [];
  for (const name of await filesIn(dir)) {
    if (skip(name)) continue;
    const file = path.join(dir, name);
    if (await redactFile(file, words)) changed.push(path.relative(base, file));
  }
  return changed;
}
