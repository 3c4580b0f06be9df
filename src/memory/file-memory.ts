/**
 * FileMemoryFiles, one scope's memory (files.ts) as a folder of Markdown files:
 * `memory/{channel}:{chatId}/` (or `memory/` itself with MEMORY_SCOPE=global), and
 * FileMemoryService, which hands each chat its folder. No LLM, no network. Every change is a
 * read-modify-write under the file's lock, written atomically; a daily note is appended to.
 *
 * Every path goes through the same containment as a file name from the model (resolveInside):
 * a MEMORY.md, note or chat folder that is a link to outside the memory folder is refused, not
 * read or appended to; and only regular files are opened (a FIFO would block a thread).
 */
import { LRUCache } from 'lru-cache';
import { lstat, readdir, rm, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { appendLine, ensureDir, syncFile, withFileLock, writeFileAtomic } from '../storage/atomic.js';
import { chatOfFileKey, resolveInside, sessionFileKey } from '../storage/paths.js';
import { footprintOf, type Footprint } from '../storage/footprint.js';
import { WORKSPACE_FILES } from '../storage/workspace-files.js';
import type { Redaction } from '../storage/redaction.js';
import { countLinesIn, redactMemoryFolder } from './file-privacy.js';
import { FileMemoryVersions } from './file-versions.js';
import { notAFile, readRegular } from '../storage/regular.js';
import { isAppError } from '../core/errors.js';
import { scrubSecrets } from '../core/log.js';
import { chatKey } from '../core/chat.js';
import {
  HISTORY_FILE,
  MEMORY_FILE,
  MONTHLY_RE,
  NOTE_RE,
  isNoteOrHistory,
  replaceSection,
  searchTexts,
  withItem,
  withNewline,
  type LineCounts,
  type MemoryFiles,
  type NoteFileInfo,
  type SearchHit,
} from './files.js';
import type { MemoryService } from './service.js';
import type { Portable } from '../storage/portable.js';
import { MEMORY_ITEMS, type MemoryItem } from './portable.js';
import { clearMemoryFolder, dumpMemoryFolder, loadMemoryFolder, memoryFolderEmpty } from './file-portable.js';

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

export class FileMemoryFiles implements MemoryFiles {
  /** Every change of MEMORY.md keeps the text it replaced (versions.ts). */
  readonly versions: FileMemoryVersions;

  /** `root`: the memory folder `dir` must stay inside once links are followed (for a chat folder, its parent). */
  constructor(
    readonly dir: string,
    readonly root: string = dir,
  ) {
    this.versions = new FileMemoryVersions(dir, root);
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

  async appendMemory(fact: string, section?: string): Promise<void> {
    await this.changeMemory('tool memory_add', (cur) => withItem(cur, fact, section));
  }

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
   * crash) until `syncNote`.
   */
  async appendNote(date: string, line: string, durable = true): Promise<void> {
    const file = await this.file(`${date}.md`);
    await ensureDir(this.dir);
    await appendLine(file, scrubSecrets(line), durable);
  }

  /** fsync of the note (and its folder entry), after appends in progress; a note that is not there is nothing to sync. */
  async syncNote(date: string): Promise<void> {
    await syncFile(await this.file(`${date}.md`));
  }

  async appendHistory(entry: string, at: Date = new Date()): Promise<void> {
    const iso = at.toISOString();
    const block = `## ${iso}\n${entry.trim()}\n\n`;
    await this.update(HISTORY_FILE, (cur) => cur + block);
    await this.update(`HISTORY-${iso.slice(0, 7)}.md`, (cur) => cur + block);
  }

  /** The names in this folder (none while it does not exist); refused when the folder links outside. */
  private async names(): Promise<string[]> {
    await this.checkFolder();
    return readdir(this.dir).catch(() => []);
  }

  async listNotes(): Promise<NoteFileInfo[]> {
    const out: NoteFileInfo[] = [];
    for (const n of await this.names()) {
      const m = NOTE_RE.exec(n);
      if (!m) continue;
      // lstat: a link is not one of our notes, whatever it points at.
      const st = await lstat(path.join(this.dir, n)).catch(() => null);
      if (st?.isFile()) out.push({ date: m[1]!, bytes: st.size });
    }
    return out.sort((a, b) => a.date.localeCompare(b.date));
  }

  async readNoteOrHistory(name: string): Promise<string | undefined> {
    if (!isNoteOrHistory(name)) return undefined;
    const { file, st } = await this.fileAndStat(name);
    return readForPrompt(file, st);
  }

  async search(keyword: string, limit = 50): Promise<SearchHit[]> {
    if (!keyword.trim()) return [];
    const texts: Array<{ name: string; text: string }> = [];
    for (const name of await this.names()) {
      if (!NOTE_RE.test(name) && !MONTHLY_RE.test(name)) continue;
      try {
        texts.push({ name, text: await readOrEmpty(await this.file(name)) });
      } catch (err) {
        // A link out or a special file is skipped: it is not one of this chat's notes.
        if (isAppError(err, 'storage.path_escape') || isAppError(err, 'storage.not_a_file')) continue;
        throw err;
      }
    }
    return searchTexts(texts, keyword, limit);
  }

  countLines(test: (line: string) => boolean): Promise<LineCounts> {
    return countLinesIn(this.dir, test);
  }

  redact(words: Redaction): Promise<string[]> {
    return redactMemoryFolder(this.dir, path.dirname(this.root), words);
  }

  footprint(): Promise<Footprint> {
    return footprintOf(this.dir);
  }
}

/** The memory folder: one sub-folder per chat (`{channel}:{chatId}`, made safe), or itself for MEMORY_SCOPE=global. */
export class FileMemoryService implements MemoryService, Portable<MemoryItem> {
  readonly portableName = MEMORY_ITEMS;

  /** The chats' folders, made again when dropped (they hold no state a turn relies on across messages). */
  private readonly cache = new LRUCache<string, FileMemoryFiles>({ max: 1_000 });

  constructor(
    readonly root: string,
    readonly scope: 'chat' | 'global',
  ) {}

  /** The scope key stored with index rows and used for isolation checks. */
  scopeKey(channel: string, chatId: string): string {
    return this.scope === 'global' ? 'global' : chatKey({ channel, chatId });
  }

  /** The workspace's memory folder (storage/workspace-files.ts). */
  static inWorkspace(workspaceDir: string, scope: 'chat' | 'global'): FileMemoryService {
    return new FileMemoryService(path.join(workspaceDir, WORKSPACE_FILES.memory), scope);
  }

  /** The chat folders whose name says their chat (storage/paths.ts); one shortened with a hash is not listed. */
  async chats(): Promise<Array<{ channel: string; chatId: string }>> {
    if (this.scope === 'global') return [];
    const out: Array<{ channel: string; chatId: string }> = [];
    for (const ent of await readdir(this.root, { withFileTypes: true }).catch(() => [])) {
      const chat = ent.isDirectory() ? chatOfFileKey(ent.name) : undefined;
      if (chat) out.push(chat);
    }
    return out;
  }

  async erase(channel: string, chatId: string): Promise<string[]> {
    if (this.scope === 'global') return [];
    const dir = this.forChat(channel, chatId).dir;
    const files = await readdir(dir, { recursive: true }).catch(() => undefined);
    if (!files) return [];
    await rm(dir, { recursive: true, force: true });
    this.cache.delete(dir);
    return [`memory folder ${path.relative(path.dirname(this.root), dir)}/ (${files.length} entries: MEMORY.md, versions, notes, history)`];
  }

  /** Moving in and out (storage/portable.ts): file-portable.ts. */
  dump(): AsyncIterable<MemoryItem> {
    return dumpMemoryFolder(this.root);
  }

  async load(items: AsyncIterable<MemoryItem>): Promise<number> {
    const n = await loadMemoryFolder(this.root, items);
    this.cache.clear();
    return n;
  }

  isEmpty(): Promise<boolean> {
    return memoryFolderEmpty(this.root);
  }

  async clear(): Promise<void> {
    await clearMemoryFolder(this.root);
    this.cache.clear();
  }

  forChat(channel: string, chatId: string): FileMemoryFiles {
    const dir = this.scope === 'global' ? this.root : path.join(this.root, sessionFileKey(channel, chatId));
    let files = this.cache.get(dir);
    if (!files) {
      files = new FileMemoryFiles(dir, this.root);
      this.cache.set(dir, files);
    }
    return files;
  }
}
