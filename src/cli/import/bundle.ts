/**
 * What an import reads from another assistant, in one shape whatever the source: long-term
 * memory files split into entries, dated notes, dated history entries, and what was left
 * aside with the reason. The readers (openclaw.ts, hermes.ts, nanobot.ts, membot.ts) fill it;
 * apply.ts writes it into a chat through the memory and index interfaces.
 */
import type { Skipped } from './source.js';
import type { ExportCopy } from '../../features/privacy/export-copy.js';

export const SOURCES = ['openclaw', 'hermes', 'nanobot', 'membot'] as const;
export type SourceName = (typeof SOURCES)[number];

/** A long-term memory file (MEMORY.md, USER.md) and its entries, each under the heading it stood under. */
export interface MemoryPart {
  /** Where it came from, relative to PATH. */
  file: string;
  /** The file as it should read in an empty MEMORY.md (the source's own text, or its entries as a list). */
  text: string;
  entries: Array<{ section: string | undefined; text: string }>;
}

/** A day's note: its lines, in order. */
export interface NotePart {
  date: string;
  file: string;
  lines: string[];
}

export interface HistoryPart {
  file: string;
  at: Date;
  text: string;
}

export interface ImportBundle {
  /** The source as people write it (OpenClaw, Hermes, nanobot, membot). */
  label: string;
  memory: MemoryPart[];
  notes: NotePart[];
  history: HistoryPart[];
  skipped: Skipped[];
  /** A membot export's exact copy: files and rows taken back as they were (membot.ts). */
  exact?: ExportCopy;
}

/**
 * Markdown split into entries: list items (with their indented continuation lines) and
 * paragraphs, each under the heading it follows (a fenced block stays one entry).
 */
export function markdownEntries(text: string): MemoryPart['entries'] {
  const out: MemoryPart['entries'] = [];
  let section: string | undefined;
  let cur: string[] = [];
  let fence = false;
  const flush = () => {
    const t = cur.join('\n').trim();
    if (t) out.push({ section, text: t });
    cur = [];
  };
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence || /^\s*(```|~~~)/.test(line)) {
      cur.push(line);
      continue;
    }
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      section = heading[1] || undefined;
    } else if (!line.trim()) flush();
    else if (/^\s{0,1}([-*+]|\d+[.)])\s+/.test(line)) {
      // A new top-level item ends the one before it.
      flush();
      cur.push(line);
    } else cur.push(line);
  }
  flush();
  return out;
}

/** An entry as compared for "already there": list marks, check boxes, case and spacing left out. */
export function normalized(text: string): string {
  return text
    .split('\n')
    .map((l) =>
      l
        .trim()
        .replace(/^\\(?=#)/, '')
        .replace(/^#{1,6}\s+/, '')
        .replace(/^([-*+]|\d+[.)])\s+/, '')
        .replace(/^\[[ xX]\]\s+/, ''),
    )
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

/**
 * An entry as one list item: kept as it is when it is one, else `- ` and its further lines
 * indented. A further line that would read as a heading is escaped (`\#`): an entry never opens
 * a section of MEMORY.md.
 */
export function asItem(text: string): string {
  const lines = text.split('\n').map((l, i) => (i > 0 ? l.replace(/^(\s*)#/, '$1\\#') : l));
  if (/^([-*+]|\d+[.)])\s+/.test(text)) return lines.join('\n');
  const [first, ...rest] = lines;
  return [`- ${first}`, ...rest.map((l) => (l.trim() ? `  ${l}` : l))].join('\n');
}

/** A fact made from an entry: one line, list mark left out. */
export function factOf(text: string): string {
  return text
    .split('\n')
    .map((l) =>
      l
        .trim()
        .replace(/^([-*+]|\d+[.)])\s+/, '')
        .replace(/^\[[ xX]\]\s+/, ''),
    )
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}
