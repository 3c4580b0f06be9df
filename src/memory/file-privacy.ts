/**
 * What /forget and purge need of a memory folder (file-memory.ts), kept apart from the reading
 * and writing of the files: counting the lines that hold words, redacting them in place,
 * measuring the folder for the memory page. Only the folder's own files, as they lie (no link
 * followed into a sub-folder; MEMORY.md changes through `changeMemory`, versions through
 * `versions.redact`).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { filesIn, redactFolder, type Redaction } from '../storage/redaction.js';
import { HISTORY_FILE, MEMORY_FILE, MONTHLY_RE, NOTE_RE, type LineCounts } from './files.js';

const linesIn = async (file: string, test: (line: string) => boolean): Promise<number> =>
  (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((l) => test(l)).length;

/** See MemoryFiles.countLines. */
export async function countLinesIn(dir: string, test: (line: string) => boolean): Promise<LineCounts> {
  const counts: LineCounts = { memory: await linesIn(path.join(dir, MEMORY_FILE), test), notes: 0, history: 0 };
  let monthly = 0;
  for (const name of await filesIn(dir)) {
    if (NOTE_RE.test(name)) counts.notes += await linesIn(path.join(dir, name), test);
    else if (name === HISTORY_FILE) counts.history += await linesIn(path.join(dir, name), test);
    else if (MONTHLY_RE.test(name)) monthly += await linesIn(path.join(dir, name), test);
  }
  // HISTORY-YYYY-MM.md repeat HISTORY.md's entries: counted only when HISTORY.md is gone.
  counts.history = Math.max(counts.history, monthly);
  return counts;
}

/** See MemoryFiles.redact: every file but MEMORY.md and hidden ones, named relative to `base`. */
export function redactMemoryFolder(dir: string, base: string, words: Redaction): Promise<string[]> {
  return redactFolder(dir, base, words, (name) => name === MEMORY_FILE || name.startsWith('.'));
}
