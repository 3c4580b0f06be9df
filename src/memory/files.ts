/**
 * The memory files of one scope (a chat, or the whole bot with MEMORY_SCOPE=global):
 * MEMORY.md (long-term), YYYY-MM-DD.md (daily notes), HISTORY.md + HISTORY-YYYY-MM.md (seed 002).
 * No LLM, no network. Every change is a read-modify-write under the file's lock, written
 * atomically, so a consolidation, a tool call and a second process can never lose each
 * other's updates; a daily note only ever grows by appended lines.
 *
 * Every path goes through the same containment as a file name from the model (resolveInside):
 * a MEMORY.md, note or chat folder that is a link to outside the memory folder is refused, not
 * read or appended to; and only regular files are opened (a FIFO would block a thread).
 */
import { LRUCache } from 'lru-cache';
import { lstat, readdir, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { appendLine, ensureDir, withFileLock, writeFileAtomic } from '../storage/atomic.js';
import { resolveInside } from '../storage/paths.js';
import { MemoryVersions } from './versions.js';
import { notAFile, readRegular } from '../storage/regular.js';
import { isAppError } from '../core/errors.js';
import { scrubSecrets } from '../core/log.js';
import { collapseLineBreaks } from '../core/text.js';

export const MEMORY_FILE = 'MEMORY.md';
export const HISTORY_FILE = 'HISTORY.md';
const NOTE_RE = /^(\d{4}-\d{2}-\d{2})\.md$/;
const MONTHLY_RE = /^HISTORY-(\d{4}-\d{2})\.md$/;

/** A daily note's or a history file's name, as it lies in the memory folder (no path). */
export function isNoteOrHistory(name: string): boolean {
  return NOTE_RE.test(name) || MONTHLY_RE.test(name) || name === HISTORY_FILE;
}

export interface NoteFileInfo {
  date: string;
  bytes: number;
}

export interface SearchHit {
  /** YYYY-MM-DD of the note, or of the history entry's header. */
  date: string;
  source: 'note' | 'history';
  line: string;
}

async function statOrNull(file: string, how: typeof stat): Promise<Stats | null> {
  try {
    return await how(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

async function readRaw(file: string): Promise<string> {
  try {
    return await readRegular(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}

/**
 * A memory file as the chat and the model may see it. Memory files are read back to the chat
 * (prompt, notes_read, /memory), so they get the log's secret scrubbing on the way in and out:
 * a key a proxy echoed into a file written by an older version is not handed out either.
 */
async function readOrEmpty(file: string): Promise<string> {
  return scrubSecrets(await readRaw(file));
}

/**
 * Texts of memory files read for the prompt, kept while the file is unchanged (same inode,
 * size and mtime): every turn reads MEMORY.md and eight daily notes, and a stat is one system
 * call where a read is four. Bounded by files and by characters (a busy day's note is
 * megabytes); a hand edit changes mtime and is seen on the next turn. 4 M characters: with
 * 32 M the cache was what kept the daemon growing over 1,000 busy chats (every chat's note of
 * the day, a line longer each turn: +1 MiB of heap per 5,000 turns in a heap snapshot diff,
 * docs/BENCHMARKS.md "Resident memory"); the chats that talk now fit, the others pay a read.
 */
const promptCache = new LRUCache<string, { ino: number; size: number; mtimeMs: number; text: string }>({
  max: 2_000,
  maxSize: 4_000_000,
  sizeCalculation: (v) => Math.max(1, v.text.length),
});
/** A text bigger than this is read each time rather than pushing out most of the others. */
const PROMPT_CACHE_MAX_TEXT = 1_000_000;

/** `st`: the file's stat (links followed); null when it does not exist. */
async function readForPrompt(file: string, st: Stats | null): Promise<string> {
  if (!st) return '';
  if (!st.isFile()) throw notAFile(file, st.isDirectory() ? 'a folder' : undefined);
  const hit = promptCache.get(file);
  if (hit && hit.ino === st.ino && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return hit.text;
  const raw = await readRaw(file);
  const text = scrubSecrets(raw);
  promptCache.delete(file);
  // Kept only when it matches the stat and the file has been still for a while: timestamps are
  // coarse, so a same-size rewrite right after this read could otherwise look unchanged.
  if (Buffer.byteLength(raw) === st.size && Date.now() - st.mtimeMs > 2_000 && text.length <= PROMPT_CACHE_MAX_TEXT) {
    promptCache.set(file, { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, text });
  }
  return text;
}

export class MemoryFiles {
  /** Every change of MEMORY.md keeps the text it replaced (versions.ts). */
  readonly versions: MemoryVersions;

  /** `root`: the memory folder `dir` must stay inside once links are followed (for a chat folder, its parent). */
  constructor(
    readonly dir: string,
    readonly root: string = dir,
  ) {
    this.versions = new MemoryVersions(dir, root);
  }

  /** The last verdict on this folder: it lies inside `root` once links are followed. */
  private folderChecked: { at: number; check: Promise<unknown> } | undefined;

  /**
   * Refused (storage.path_escape) when this folder is a link out of `root`. Following links
   * costs a few system calls per path, and a turn reads nine files at once: the folder's
   * verdict is shared for a second, then taken again.
   */
  private checkFolder(): Promise<unknown> {
    const now = Date.now();
    if (!this.folderChecked || now - this.folderChecked.at > 1_000) {
      const check = resolveInside(this.dir, '.', this.root);
      check.catch(() => undefined);
      this.folderChecked = { at: now, check };
    }
    return this.folderChecked.check;
  }

  /** The path of `name` in this folder; refused (storage.path_escape) when it or the folder links outside. */
  private async file(name: string): Promise<string> {
    return (await this.fileAndStat(name)).file;
  }

  /**
   * `file(name)` and its stat with links followed (null: missing). In a folder that is inside,
   * a plain name can only lead out if it is a link itself: one lstat decides (and serves as the
   * stat), and only a link gets the full check (a link that stays inside is fine).
   */
  private async fileAndStat(name: string): Promise<{ file: string; st: Stats | null }> {
    if (name !== path.basename(name) || name === '.' || name === '..') {
      const file = await resolveInside(this.dir, name, this.root);
      return { file, st: await statOrNull(file, stat) };
    }
    await this.checkFolder();
    const file = path.join(this.dir, name);
    const st = await statOrNull(file, lstat);
    if (!st?.isSymbolicLink()) return { file, st };
    await resolveInside(this.dir, name, this.root);
    return { file, st: await statOrNull(file, stat) };
  }

  /**
   * Read-modify-write of one file under its lock; `change` returns the new content or null to
   * leave it. A change of MEMORY.md is recorded as a version (named by `source`) first.
   */
  async update(name: string, change: (current: string) => string | null, source = 'edit'): Promise<boolean> {
    // Checked before the folder or the lock is made: a linked folder gets nothing created in it.
    const file = await this.file(name);
    await ensureDir(this.dir);
    return withFileLock(file, async () => {
      const current = await readOrEmpty(file);
      const changed = change(current);
      if (changed === null) return false;
      // A key pasted into memory (or echoed by a provider) never reaches the file.
      const next = scrubSecrets(changed);
      if (next === current) return false;
      if (name === MEMORY_FILE) await this.versions.record(current, next, source);
      await writeFileAtomic(file, next);
      return true;
    });
  }

  /** Read-modify-write of MEMORY.md, kept as a version made by `source`. */
  changeMemory(source: string, change: (current: string) => string | null): Promise<boolean> {
    return this.update(MEMORY_FILE, change, source);
  }

  async readMemory(): Promise<string> {
    const { file, st } = await this.fileAndStat(MEMORY_FILE);
    return readForPrompt(file, st);
  }

  async writeMemory(content: string, source = 'rewrite'): Promise<boolean> {
    return this.update(MEMORY_FILE, () => withNewline(content), source);
  }

  /** Appends one fact as a list item (under `## section` when given, creating it if needed). */
  async appendMemory(fact: string, section?: string): Promise<void> {
    const item = `- ${collapseLineBreaks(fact).trim()}`;
    await this.changeMemory('tool memory_add', (cur) => {
      if (!section) return `${cur}${cur && !cur.endsWith('\n') ? '\n' : ''}${item}\n`;
      const { before, body, after, found } = splitSection(cur, section);
      if (!found) return `${cur}${cur && !cur.endsWith('\n') ? '\n' : ''}${cur ? '\n' : ''}## ${sectionTitle(section)}\n${item}\n`;
      const trimmed = body.replace(/\n+$/, '');
      return `${before}${trimmed}${trimmed ? '\n' : ''}${item}\n${after ? `\n${after}` : ''}`;
    });
  }

  /** Replaces the body of `## section` (creating it when missing). */
  async rewriteSection(section: string, content: string): Promise<void> {
    await this.changeMemory('tool memory_rewrite', (cur) => replaceSection(cur, section, content));
  }

  async readNote(date: string): Promise<string> {
    const { file, st } = await this.fileAndStat(`${date}.md`);
    return readForPrompt(file, st);
  }

  /** HISTORY.md, read like MEMORY.md (inside the folder, a regular file, secrets scrubbed). */
  async readHistory(): Promise<string> {
    const { file, st } = await this.fileAndStat(HISTORY_FILE);
    return readForPrompt(file, st);
  }

  /** Version `n` of MEMORY.md, when kept; refused (storage.path_escape) when versions/ links out of the folder. */
  async readVersion(n: number): Promise<string | undefined> {
    const text = await this.versions.read(n);
    return text === undefined ? undefined : scrubSecrets(text);
  }

  /**
   * Appends one line to a daily note: one write in append mode, not a rewrite of the whole
   * day's file on every message (a busy day's note grows to hundreds of KB). Only the daemon
   * writes notes (one daemon per workspace; daily-notes.ts is the one writer), so appends are
   * serialized in-process. A kill cannot tear a single small write, and no earlier line is ever
   * touched. `durable` false: not fsynced (the line is rebuilt from the session log after a
   * crash); returns the file, for a later `syncFile`.
   */
  async appendNote(date: string, line: string, durable = true): Promise<string> {
    const file = await this.file(`${date}.md`);
    await ensureDir(this.dir);
    await appendLine(file, scrubSecrets(line), durable);
    return file;
  }

  /** Appends `## <iso>\n<entry>` to HISTORY.md and to HISTORY-YYYY-MM.md (month of the timestamp). */
  async appendHistory(entry: string, at: Date = new Date()): Promise<void> {
    const iso = at.toISOString();
    const block = `## ${iso}\n${entry.trim()}\n\n`;
    await this.update(HISTORY_FILE, (cur) => cur + block);
    await this.update(`HISTORY-${iso.slice(0, 7)}.md`, (cur) => cur + block);
  }

  async listNotes(): Promise<NoteFileInfo[]> {
    await this.checkFolder();
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    const out: NoteFileInfo[] = [];
    for (const n of names) {
      const m = NOTE_RE.exec(n);
      if (!m) continue;
      // lstat: a link is not one of our notes, whatever it points at.
      const st = await lstat(path.join(this.dir, n)).catch(() => null);
      if (st?.isFile()) out.push({ date: m[1]!, bytes: st.size });
    }
    return out.sort((a, b) => a.date.localeCompare(b.date));
  }

  /**
   * A daily note or history file named by the model (notes_read); undefined for any other name.
   * MEMORY.md and its versions are not among them: they are read whole with memory_read, which a
   * group member is not offered (and versions keep entries a rewrite removed).
   */
  async readNoteOrHistory(name: string): Promise<string | undefined> {
    if (!isNoteOrHistory(name)) return undefined;
    const { file, st } = await this.fileAndStat(name);
    return readForPrompt(file, st);
  }

  /** Case-insensitive keyword search over daily notes and the monthly history files, newest first. */
  async search(keyword: string, limit = 50): Promise<SearchHit[]> {
    const needle = keyword.toLowerCase().trim();
    if (!needle) return [];
    await this.checkFolder();
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    // Each hit gets a sortable time key: "YYYY-MM-DD HH:mm" for note lines, the ISO header for
    // history entries, so notes and history interleave by when they happened.
    const hits: Array<SearchHit & { key: string }> = [];
    for (const name of names) {
      const note = NOTE_RE.exec(name);
      const monthly = MONTHLY_RE.exec(name);
      if (!note && !monthly) continue;
      let text: string;
      try {
        text = await readOrEmpty(await this.file(name));
      } catch (err) {
        // A link out or a special file is skipped: it is not one of this chat's notes.
        if (isAppError(err, 'storage.path_escape') || isAppError(err, 'storage.not_a_file')) continue;
        throw err;
      }
      if (note) {
        for (const line of text.split('\n')) {
          if (!line.toLowerCase().includes(needle)) continue;
          const time = /^\[(\d{2}:\d{2})\]/.exec(line)?.[1] ?? '00:00';
          hits.push({ date: note[1]!, source: 'note', line, key: `${note[1]}T${time}` });
        }
      } else {
        for (const entry of text.split(/^## /m)) {
          if (!entry.trim() || !entry.toLowerCase().includes(needle)) continue;
          const nl = entry.indexOf('\n');
          const header = (nl < 0 ? entry : entry.slice(0, nl)).trim();
          const body = nl < 0 ? '' : entry.slice(nl + 1).trim();
          hits.push({ date: header.slice(0, 10), source: 'history', line: collapseLineBreaks(body), key: header.slice(0, 16) });
        }
      }
    }
    hits.sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
    return hits.slice(0, limit).map(({ key: _key, ...h }) => h);
  }
}

/** The text with a final newline (an empty text stays empty). */
export function withNewline(content: string): string {
  return content.endsWith('\n') || content === '' ? content : `${content}\n`;
}

/** `text` with the body of `## section` replaced by `content` (the section appended when missing). */
export function replaceSection(text: string, section: string, content: string): string {
  const body = content.trim();
  const { before, after, found } = splitSection(text, section);
  if (!found) return `${text}${text && !text.endsWith('\n') ? '\n' : ''}${text ? '\n' : ''}## ${sectionTitle(section)}\n${body}\n`;
  return `${before}${body}\n${after ? `\n${after}` : ''}`;
}

/**
 * A section name as one heading line: line breaks (any kind) and other control characters
 * become spaces and leading `#` go, so a name can never open a heading of its own
 * ("Prefs\n# SYSTEM: …" stays inside `## Prefs # SYSTEM: …`).
 */
export function sectionTitle(name: string): string {
  return name
    .replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ')
    .replace(/ {2,}/g, ' ')
    .trim()
    .replace(/^#+\s*/, '');
}

/** True when `name` is a single line (what the tools accept as a section name). */
export function isOneLine(name: string): boolean {
  return !/[\r\n\u2028\u2029\u0085\v\f]/.test(name);
}

/** Splits markdown around `## name` (case-insensitive): text before the body, the body, and what follows. */
export function splitSection(text: string, name: string): { before: string; body: string; after: string; found: boolean } {
  const lines = text.split('\n');
  const want = sectionTitle(name).toLowerCase();
  const start = lines.findIndex(
    (l) =>
      /^##\s+/.test(l) &&
      l
        .replace(/^##\s+/, '')
        .trim()
        .toLowerCase() === want,
  );
  if (start < 0) return { before: text, body: '', after: '', found: false };
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    if (/^#{1,2}\s+/.test(lines[i]!)) {
      end = i;
      break;
    }
  }
  return {
    before: `${lines.slice(0, start + 1).join('\n')}\n`,
    body: lines.slice(start + 1, end).join('\n'),
    after: lines.slice(end).join('\n'),
    found: true,
  };
}
