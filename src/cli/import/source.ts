/**
 * Reading another assistant's memory folder as untrusted input: only named files under PATH,
 * a link followed only while it stays inside PATH, only regular files (a FIFO would block),
 * each file at most MAX_FILE_BYTES (an export file: MAX_TOTAL_BYTES) and all of them at most
 * MAX_TOTAL_BYTES, text only (UTF-8, no NUL bytes). Whatever is refused is recorded with the
 * reason, for the import's report.
 */
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { resolveInside } from '../../storage/paths.js';
import { openRegular } from '../../storage/regular.js';
import { isAppError } from '../../core/errors.js';

export const MAX_FILE_BYTES = 8 * 1024 * 1024;
export const MAX_TOTAL_BYTES = 64 * 1024 * 1024;
/** Files listed in one folder at most (a daily-note folder of 27 years). */
export const MAX_LISTED = 10_000;

export interface Skipped {
  file: string;
  why: string;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

export class SourceTree {
  readonly skipped: Skipped[] = [];
  private total = 0;

  private constructor(readonly root: string) {}

  /** The folder PATH names (its real path); undefined when it is not a folder. */
  static async open(dir: string): Promise<SourceTree | undefined> {
    const real = await realpath(dir).catch(() => undefined);
    if (!real || !(await stat(real)).isDirectory()) return undefined;
    return new SourceTree(real);
  }

  /** Whether `rel` is there at all (a link counts, wherever it leads). */
  async exists(rel: string): Promise<boolean> {
    return (await lstat(path.join(this.root, rel)).catch(() => null)) !== null;
  }

  /**
   * The text of `rel` (line breaks as they are, a BOM dropped), or undefined when it is missing
   * or refused (then in `skipped` with the reason).
   */
  async read(rel: string, maxBytes = MAX_FILE_BYTES): Promise<string | undefined> {
    if (!(await this.exists(rel))) return undefined;
    let file: string;
    try {
      file = await resolveInside(this.root, rel);
    } catch (err) {
      if (!isAppError(err, 'storage.path_escape')) throw err;
      return this.skip(rel, 'a link to outside PATH (not followed)');
    }
    let fh: Awaited<ReturnType<typeof openRegular>>;
    try {
      fh = await openRegular(file, 'read');
    } catch (err) {
      if (isAppError(err, 'storage.not_a_file')) return this.skip(rel, 'not a regular file');
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return this.skip(rel, 'a link to nothing');
      return this.skip(rel, `could not be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    try {
      const { size } = await fh.stat();
      if (size > maxBytes) return this.skip(rel, `larger than ${maxBytes / 1024 / 1024} MB (${size.toLocaleString('en-US')} bytes)`);
      if (this.total + size > MAX_TOTAL_BYTES) return this.skip(rel, `the import's ${MAX_TOTAL_BYTES / 1024 / 1024} MB in all were reached`);
      const bytes = await fh.readFile();
      this.total += bytes.length;
      if (bytes.includes(0)) return this.skip(rel, 'not text (NUL bytes)');
      try {
        return decoder.decode(bytes).replace(/^\uFEFF/, '');
      } catch {
        return this.skip(rel, 'not UTF-8 text');
      }
    } finally {
      await fh.close();
    }
  }

  /** Names of the entries of folder `rel` ([] when missing; a folder that is a link out of PATH is skipped). */
  async list(rel: string): Promise<string[]> {
    if (!(await this.exists(rel))) return [];
    let dir: string;
    try {
      dir = await resolveInside(this.root, rel);
    } catch (err) {
      if (!isAppError(err, 'storage.path_escape')) throw err;
      this.skip(`${rel}/`, 'a link to outside PATH (not followed)');
      return [];
    }
    const names = await readdir(dir).catch(() => undefined);
    if (!names) return [];
    names.sort();
    if (names.length > MAX_LISTED) {
      this.skip(`${rel}/`, `${names.length - MAX_LISTED} entries past the first ${MAX_LISTED} (by name)`);
      return names.slice(0, MAX_LISTED);
    }
    return names;
  }

  /** Whether `rel` is a folder (links followed only inside PATH). */
  async isFolder(rel: string): Promise<boolean> {
    try {
      return (await stat(await resolveInside(this.root, rel))).isDirectory();
    } catch {
      return false;
    }
  }

  skip(file: string, why: string): undefined {
    this.skipped.push({ file, why });
    return undefined;
  }
}

/** Unix line breaks (the other assistants' files come from any system). */
export function unixLines(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}
