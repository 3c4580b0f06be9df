/**
 * The memory of one scope (a chat, or the whole bot with MEMORY_SCOPE=global): MEMORY.md
 * (long-term), YYYY-MM-DD.md (daily notes), HISTORY.md + HISTORY-YYYY-MM.md (seed 002), and the
 * versions of MEMORY.md. Every change is atomic against every other (a consolidation, a tool
 * call and a second process never lose each other's updates); a daily note only ever grows by
 * appended lines; what is read back to the chat has secrets scrubbed, and a key never reaches
 * the memory in the first place.
 *
 * Callers see the `MemoryFiles` interface (one scope's, from MemoryService.forChat); its
 * implementations are a folder of Markdown files (file-memory.ts) and rows in PostgreSQL
 * (pg/files.ts). What any implementation must do: test/memory/service.contract.ts. The Markdown helpers below are shared by every one.
 */
import { collapseLineBreaks } from '../core/text.js';
import type { MemoryVersions } from './versions.js';
import type { Redaction } from '../storage/redaction.js';
import type { Footprint } from '../storage/footprint.js';

export const MEMORY_FILE = 'MEMORY.md';
export const HISTORY_FILE = 'HISTORY.md';
export const NOTE_RE = /^(\d{4}-\d{2}-\d{2})\.md$/;
export const MONTHLY_RE = /^HISTORY-(\d{4}-\d{2})\.md$/;

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

/** Lines that hold some words, per kind of memory (what a /forget would take out). */
export interface LineCounts {
  memory: number;
  notes: number;
  /** In HISTORY.md, or in the monthly files when it is gone (they repeat its entries). */
  history: number;
}

export interface MemoryFiles {
  /** Every change of MEMORY.md keeps the text it replaced (versions.ts). */
  readonly versions: MemoryVersions;
  /**
   * Read-modify-write of one memory file (MEMORY.md, a daily note `YYYY-MM-DD.md`, HISTORY.md or
   * HISTORY-YYYY-MM.md), atomic against every other change of it, in this process or another:
   * `change` gets the current text ('' when there is none) and returns the new one, or null to
   * leave it. A change of MEMORY.md is kept as a version made by `source`. A name that leads out
   * of the scope's memory is refused (storage.path_escape). True when the text changed.
   */
  update(name: string, change: (current: string) => string | null, source?: string): Promise<boolean>;
  /** `update` of MEMORY.md, kept as a version made by `source`. */
  changeMemory(source: string, change: (current: string) => string | null): Promise<boolean>;
  /** MEMORY.md ('' when there is none), secrets scrubbed. */
  readMemory(): Promise<string>;
  /** Replaces MEMORY.md (with a final newline). */
  writeMemory(content: string, source?: string): Promise<boolean>;
  /** Appends one fact as a list item (under `## section` when given, creating it if needed). */
  appendMemory(fact: string, section?: string): Promise<void>;
  /** Replaces the body of `## section` (creating it when missing). */
  rewriteSection(section: string, content: string): Promise<void>;
  /** The daily note of `date` (YYYY-MM-DD), '' when there is none. */
  readNote(date: string): Promise<string>;
  /** HISTORY.md, every entry consolidation wrote. */
  readHistory(): Promise<string>;
  /** Version `n` of MEMORY.md, when kept. */
  readVersion(n: number): Promise<string | undefined>;
  /**
   * Appends one line to the daily note of `date`; no earlier line is ever touched. `durable`
   * false: not yet made durable (the line can be rebuilt from the session log) until `syncNote`.
   */
  appendNote(date: string, line: string, durable?: boolean): Promise<void>;
  /** Makes the lines appended to `date`'s note durable (after `appendNote(…, false)`). */
  syncNote(date: string): Promise<void>;
  /** Appends `## <iso>\n<entry>` to HISTORY.md and to HISTORY-YYYY-MM.md (month of the timestamp). */
  appendHistory(entry: string, at?: Date): Promise<void>;
  /** The daily notes there are, oldest first. */
  listNotes(): Promise<NoteFileInfo[]>;
  /**
   * A daily note or history file named by the model (notes_read); undefined for any other name.
   * MEMORY.md and its versions are not among them: they are read whole with memory_read, which a
   * group member is not offered (and versions keep entries a rewrite removed).
   */
  readNoteOrHistory(name: string): Promise<string | undefined>;
  /** Case-insensitive keyword search over daily notes and the monthly history files, newest first. */
  search(keyword: string, limit?: number): Promise<SearchHit[]>;
  /** The lines `test` accepts, counted in MEMORY.md, the daily notes and the history, as kept (/forget's preview). */
  countLines(test: (line: string) => boolean): Promise<LineCounts>;
  /**
   * Takes the words out of everything kept but MEMORY.md (`changeMemory`) and its versions
   * (`versions.redact`): notes, history, any other file, each line kept with the words marked.
   * Returns what changed, one name each (a file, relative to the workspace), for /forget's report.
   */
  redact(words: Redaction): Promise<string[]>;
  /** How much is kept and when it last changed (the memory page's list). */
  footprint(): Promise<Footprint>;
}

/** MemoryFiles.countLines over a scope's files as kept (name and text each). */
export function countLinesOf(files: Iterable<{ name: string; text: string }>, test: (line: string) => boolean): LineCounts {
  const lines = (text: string) => text.split('\n').filter((l) => test(l)).length;
  const counts: LineCounts = { memory: 0, notes: 0, history: 0 };
  let monthly = 0;
  for (const { name, text } of files) {
    if (name === MEMORY_FILE) counts.memory += lines(text);
    else if (NOTE_RE.test(name)) counts.notes += lines(text);
    else if (name === HISTORY_FILE) counts.history += lines(text);
    else if (MONTHLY_RE.test(name)) monthly += lines(text);
  }
  // HISTORY-YYYY-MM.md repeat HISTORY.md's entries: counted only when HISTORY.md is gone.
  counts.history = Math.max(counts.history, monthly);
  return counts;
}

/** The text with a final newline (an empty text stays empty). */
export function withNewline(content: string): string {
  return content.endsWith('\n') || content === '' ? content : `${content}\n`;
}

/** `text` with `fact` appended as one list item (under `## section` when given, the section made when missing). */
export function withItem(text: string, fact: string, section?: string): string {
  return withBlock(text, `- ${collapseLineBreaks(fact).trim()}`, section);
}

/** `text` with `item` (one or more lines, as given) appended, under `## section` when given (made when missing). */
export function withBlock(text: string, item: string, section?: string): string {
  if (!section) return `${text}${text && !text.endsWith('\n') ? '\n' : ''}${item}\n`;
  const { before, body, after, found } = splitSection(text, section);
  if (!found) return `${text}${text && !text.endsWith('\n') ? '\n' : ''}${text ? '\n' : ''}## ${sectionTitle(section)}\n${item}\n`;
  const trimmed = body.replace(/\n+$/, '');
  return `${before}${trimmed}${trimmed ? '\n' : ''}${item}\n${after ? `\n${after}` : ''}`;
}

/**
 * What `search` finds for `keyword` (case-insensitive) in these daily notes (`YYYY-MM-DD.md`: a
 * hit per line) and monthly history files (`HISTORY-YYYY-MM.md`: a hit per entry), newest
 * first, at most `limit`.
 */
export function searchTexts(files: ReadonlyArray<{ name: string; text: string }>, keyword: string, limit: number): SearchHit[] {
  const needle = keyword.toLowerCase().trim();
  if (!needle) return [];
  // Each hit gets a sortable time key: "YYYY-MM-DD HH:mm" for note lines, the ISO header for
  // history entries, so notes and history interleave by when they happened.
  const hits: Array<SearchHit & { key: string }> = [];
  for (const { name, text } of files) {
    const note = NOTE_RE.exec(name);
    if (note) {
      for (const line of text.split('\n')) {
        if (!line.toLowerCase().includes(needle)) continue;
        const time = /^\[(\d{2}:\d{2})\]/.exec(line)?.[1] ?? '00:00';
        hits.push({ date: note[1]!, source: 'note', line, key: `${note[1]}T${time}` });
      }
    } else if (MONTHLY_RE.test(name)) {
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
