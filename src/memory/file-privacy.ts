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
import { MEMORY_FILE, countLinesOf, isNoteOrHistory, type LineCounts } from './files.js';

/** See MemoryFiles.countLines. */
export async function countLinesIn(dir: string, test: (line: string) => boolean): Promise<LineCounts> {
  const files: Array<{ name: string; text: string }> = [];
  for (const name of [MEMORY_FILE, ...(await filesIn(dir)).filter(isNoteOrHistory)]) {
    files.push({ name, text: await readFile(path.join(dir, name), 'utf8').catch(() => '') });
  }
  return countLinesOf(files, test);
}

/** See MemoryFiles.redact: every file but MEMORY.md and hidden ones, named relative to `base`. */
export function redactMemoryFolder(dir: string, base: string, words: Redaction): Promise<string[]> {
  return redactFolder(dir, base, words, (name) => name === MEMORY_FILE || name.startsWith('.'));
}
