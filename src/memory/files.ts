/**
 * The memory files of one scope (a chat, or the whole bot with MEMORY_SCOPE=global):
 * MEMORY.md (long-term), YYYY-MM-DD.md (daily notes), HISTORY.md + HISTORY-YYYY-MM.md (seed 002).
 * No LLM, no network. Every change is a read-modify-write under the file's lock, written
 * atomically, so a consolidation, a tool call and a second process can never lose each
 * other's updates; a daily note only ever grows by appended lines.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { appendLine, ensureDir, withFileLock, writeFileAtomic } from '../storage/atomic.js';
import { resolveInside } from '../storage/paths.js';
import { collapseLineBreaks } from '../util/text.js';

export const MEMORY_FILE = 'MEMORY.md';
export const HISTORY_FILE = 'HISTORY.md';
const NOTE_RE = /^(\d{4}-\d{2}-\d{2})\.md$/;
const MONTHLY_RE = /^HISTORY-(\d{4}-\d{2})\.md$/;

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

async function readOrEmpty(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}

/**
 * Texts of memory files read for the prompt, kept while the file is unchanged (same inode,
 * size and mtime): every turn reads MEMORY.md and eight daily notes, and a stat is one system
 * call where a read is four. Bounded by files and by characters (a busy day's note is
 * megabytes); a hand edit changes mtime and is seen on the next turn.
 */
const promptCache = new Map<string, { ino: number; size: number; mtimeMs: number; text: string }>();
const PROMPT_CACHE_FILES = 2_000;
const PROMPT_CACHE_CHARS = 32_000_000;
let promptCacheChars = 0;

function forget(file: string): void {
  const old = promptCache.get(file);
  if (!old) return;
  promptCache.delete(file);
  promptCacheChars -= old.text.length;
}

async function readForPrompt(file: string): Promise<string> {
  let st;
  try {
    st = await stat(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
  const hit = promptCache.get(file);
  if (hit && hit.ino === st.ino && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return hit.text;
  const text = await readOrEmpty(file);
  forget(file);
  // Kept only when it matches the stat and the file has been still for a while: timestamps are
  // coarse, so a same-size rewrite right after this read could otherwise look unchanged.
  if (Buffer.byteLength(text) === st.size && Date.now() - st.mtimeMs > 2_000 && text.length <= PROMPT_CACHE_CHARS / 4) {
    while (promptCache.size >= PROMPT_CACHE_FILES || (promptCache.size > 0 && promptCacheChars + text.length > PROMPT_CACHE_CHARS)) {
      forget(promptCache.keys().next().value!);
    }
    promptCache.set(file, { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, text });
    promptCacheChars += text.length;
  }
  return text;
}

export class MemoryFiles {
  constructor(readonly dir: string) {}

  private file(name: string): string {
    return path.join(this.dir, name);
  }

  /** Read-modify-write of one file under its lock; `change` returns the new content or null to leave it. */
  async update(name: string, change: (current: string) => string | null): Promise<boolean> {
    await ensureDir(this.dir);
    const file = this.file(name);
    return withFileLock(file, async () => {
      const current = await readOrEmpty(file);
      const next = change(current);
      if (next === null || next === current) return false;
      await writeFileAtomic(file, next);
      return true;
    });
  }

  readMemory(): Promise<string> {
    return readForPrompt(this.file(MEMORY_FILE));
  }

  async writeMemory(content: string): Promise<boolean> {
    const text = content.endsWith('\n') || content === '' ? content : `${content}\n`;
    return this.update(MEMORY_FILE, () => text);
  }

  /** Appends one fact as a list item (under `## section` when given, creating it if needed). */
  async appendMemory(fact: string, section?: string): Promise<void> {
    const item = `- ${collapseLineBreaks(fact).trim()}`;
    await this.update(MEMORY_FILE, (cur) => {
      if (!section) return `${cur}${cur && !cur.endsWith('\n') ? '\n' : ''}${item}\n`;
      const { before, body, after, found } = splitSection(cur, section);
      if (!found) return `${cur}${cur && !cur.endsWith('\n') ? '\n' : ''}${cur ? '\n' : ''}## ${section}\n${item}\n`;
      const trimmed = body.replace(/\n+$/, '');
      return `${before}${trimmed}${trimmed ? '\n' : ''}${item}\n${after ? `\n${after}` : ''}`;
    });
  }

  /** Replaces the body of `## section` (creating it when missing). */
  async rewriteSection(section: string, content: string): Promise<void> {
    const body = content.trim();
    await this.update(MEMORY_FILE, (cur) => {
      const { before, after, found } = splitSection(cur, section);
      if (!found) return `${cur}${cur && !cur.endsWith('\n') ? '\n' : ''}${cur ? '\n' : ''}## ${section}\n${body}\n`;
      return `${before}${body}\n${after ? `\n${after}` : ''}`;
    });
  }

  readNote(date: string): Promise<string> {
    return readForPrompt(this.file(`${date}.md`));
  }

  /**
   * Appends one line to a daily note: one fsynced write in append mode, not a rewrite of the
   * whole day's file on every message (a busy day's note grows to hundreds of KB). Only the
   * daemon writes notes (one daemon per workspace), so appends are serialized in-process. A
   * kill cannot tear a single small write, and no earlier line is ever touched.
   */
  async appendNote(date: string, line: string): Promise<void> {
    await ensureDir(this.dir);
    await appendLine(this.file(`${date}.md`), line);
  }

  /** Appends `## <iso>\n<entry>` to HISTORY.md and to HISTORY-YYYY-MM.md (month of the timestamp). */
  async appendHistory(entry: string, at: Date = new Date()): Promise<void> {
    const iso = at.toISOString();
    const block = `## ${iso}\n${entry.trim()}\n\n`;
    await this.update(HISTORY_FILE, (cur) => cur + block);
    await this.update(`HISTORY-${iso.slice(0, 7)}.md`, (cur) => cur + block);
  }

  async listNotes(): Promise<NoteFileInfo[]> {
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
      const st = await stat(this.file(n)).catch(() => null);
      if (st?.isFile()) out.push({ date: m[1]!, bytes: st.size });
    }
    return out.sort((a, b) => a.date.localeCompare(b.date));
  }

  /** Reads a file named by the model, refusing anything that resolves outside this directory. */
  async readRelative(relative: string): Promise<string> {
    const file = await resolveInside(this.dir, relative);
    return readOrEmpty(file);
  }

  /** Case-insensitive keyword search over daily notes and the monthly history files, newest first. */
  async search(keyword: string, limit = 50): Promise<SearchHit[]> {
    const needle = keyword.toLowerCase().trim();
    if (!needle) return [];
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
      const text = await readOrEmpty(this.file(name));
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

/** Splits markdown around `## name` (case-insensitive): text before the body, the body, and what follows. */
export function splitSection(text: string, name: string): { before: string; body: string; after: string; found: boolean } {
  const lines = text.split('\n');
  const want = name.trim().replace(/^#+\s*/, '').toLowerCase();
  const start = lines.findIndex((l) => /^##\s+/.test(l) && l.replace(/^##\s+/, '').trim().toLowerCase() === want);
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
