/**
 * Writes an ImportBundle into one chat, only through the store interfaces (MemoryFiles,
 * MemoryIndex through IndexingService), never by touching the workspace's files:
 *
 * - long-term entries merge into MEMORY.md in one `changeMemory` (a version: /memory undo takes
 *   it back); an entry already there (same words, list marks and case aside) is not added again;
 * - a dated file becomes the daily note of its date: its lines appended after the chat's own,
 *   under a line naming the file, only those the note does not hold yet (counted, so a line
 *   written twice in the source is kept twice);
 * - history entries go to HISTORY.md (and its month's file) at their own time, unless there;
 * - everything is indexed: note lines and history entries as episodes at their date (a source
 *   key per line, so a second import finds them: IndexingService.ingestOnce), entries as facts
 *   (their own de-duplication). The imported conversations are marked consolidated, so the
 *   nightly job does not summarize them into memory a second time.
 *
 * A membot export's exact copy (bundle.exact) is taken back as it was: into an empty chat its
 * files byte for byte and its rows with their times, so search finds the same (exact.ts).
 */
import { createHash } from 'node:crypto';
import { TZDate } from '@date-fns/tz';
import type { MemoryFiles } from '../../memory/files.js';
import { withBlock } from '../../memory/files.js';
import type { MemoryIndex } from '../../index/memory-index.js';
import { IndexingService } from '../../index/ingest.js';
import { scrubSecrets } from '../../core/log.js';
import { asItem, factOf, normalized, type ImportBundle, type MemoryPart } from './bundle.js';
import type { Skipped } from './source.js';

export interface ImportTarget {
  files: MemoryFiles;
  index: MemoryIndex;
  scope: string;
  timezone: string;
  /** The source's name in keys and version labels (openclaw, hermes, nanobot, membot). */
  source: string;
}

export interface ImportReport {
  memory: { added: number; present: number; files: string[] };
  notes: Array<{ date: string; added: number; present: number; hadNote: boolean }>;
  history: { added: number; present: number };
  /** Rows the index took, and those it had already; `off` when it could not be used. */
  index: { episodes: number; facts: number; reflections: number; present: number; later: number; off?: string };
  /** Files restored byte for byte into an empty chat (membot). */
  restored: string[];
  skipped: Skipped[];
}

export function emptyReport(skipped: Skipped[]): ImportReport {
  return {
    memory: { added: 0, present: 0, files: [] },
    notes: [],
    history: { added: 0, present: 0 },
    index: { episodes: 0, facts: 0, reflections: 0, present: 0, later: 0 },
    restored: [],
    skipped,
  };
}

/** A short stable key of the parts (an imported row's source id). */
export function keyOf(...parts: Array<string | number | null>): string {
  return createHash('sha256').update(parts.map(String).join('\u0000')).digest('hex').slice(0, 24);
}

/** Counts occurrences of each line (what is "already there", a repeated line counted as often as it occurs). */
function lineCounts(text: string): Map<string, number> {
  const have = new Map<string, number>();
  for (const l of text.split('\n')) have.set(l, (have.get(l) ?? 0) + 1);
  return have;
}

/** `lines` the text does not hold yet (by count), appended after it; null when it holds them all. */
export function appendMissing(cur: string, lines: string[]): { text: string | null; added: number; present: number } {
  const have = lineCounts(cur);
  const add: string[] = [];
  for (const l of lines) {
    const n = have.get(l) ?? 0;
    if (n > 0) have.set(l, n - 1);
    else add.push(l);
  }
  const present = lines.length - add.length;
  if (add.length === 0) return { text: null, added: 0, present };
  return { text: `${cur}${cur && !cur.endsWith('\n') ? '\n' : ''}${add.join('\n')}\n`, added: add.length, present };
}

/**
 * MEMORY.md with the parts' entries merged in: an empty one takes the first part's text as it
 * is; then each entry not already there goes under the heading it stood under in its file
 * (made when missing), or under "Imported from <label> (<file>)".
 */
export function mergeEntries(cur: string, parts: MemoryPart[], label: string): { text: string; added: number; present: number } {
  let text = cur;
  let added = 0;
  let present = 0;
  for (const part of parts) {
    if (!text.trim()) {
      text = scrubSecrets(part.text);
      added += part.entries.length;
      continue;
    }
    for (const e of part.entries) {
      const entry = scrubSecrets(e.text);
      if (` ${normalized(text)} `.includes(` ${normalized(entry)} `)) {
        present++;
        continue;
      }
      text = withBlock(text, asItem(entry), e.section ?? `Imported from ${label} (${part.file})`);
      added++;
    }
  }
  return { text, added, present };
}

/**
 * A note line that says something beyond its date (not the import's own line, a rule, or a
 * heading naming the day — the row has that date as its time, and a date in the words would
 * draw every question about another day of the month): indexed.
 */
function indexable(line: string): boolean {
  if (/^\[imported from /.test(line)) return false;
  return /\p{L}/u.test(line.replace(/\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}/g, ''));
}

/** When a note line happened: its leading time of day (`[14:05]`, `14:05 -`, `- 09:30`), or noon of its date. */
export function lineTime(date: string, line: string, timezone: string): Date {
  const m = /^\s*(?:[-*+]\s*)?(?:\*\*)?\[?(\d{1,2})[:.](\d{2})\b/.exec(line);
  const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
  const h = m && Number(m[1]) < 24 && Number(m[2]) < 60 ? [Number(m[1]), Number(m[2])] : [12, 0];
  return new Date(new TZDate(y, mo - 1, d, h[0]!, h[1]!, timezone).getTime());
}

export class Importer {
  private readonly ingest: IndexingService;
  readonly report: ImportReport;
  private readonly sessions = new Set<string>();

  constructor(
    private readonly t: ImportTarget,
    private readonly bundle: ImportBundle,
  ) {
    this.ingest = new IndexingService(t.index);
    this.report = emptyReport(bundle.skipped);
    if (!t.index.enabled) this.report.index.off = t.index.disabledReason ?? 'the index is off';
  }

  /** Saves one episode unless its key is there already. */
  episode(
    content: string,
    at: Date,
    sessionId: string,
    key: string,
    role: 'user' | 'assistant' = 'user',
    speaker: string | undefined = this.bundle.label,
  ): void {
    if (this.report.index.off || !content.trim()) return;
    const r = this.ingest.ingestOnce({ content, role, speaker, sessionId, scope: this.t.scope, eventTime: at, sourceMessageId: `import:${key}` });
    this.sessions.add(sessionId);
    if (r === 'saved') this.report.index.episodes++;
    else if (r === 'present') this.report.index.present++;
    else this.report.index.later++;
  }

  /** Saves one fact (the index keeps one of equal facts: a duplicate counts as there). */
  fact(content: string, confidence?: number, eventTime?: Date): void {
    if (this.report.index.off || !content.trim()) return;
    const [saved] = this.t.index.saveFacts([{ content, scope: this.t.scope, confidence, eventTime }]);
    if (!saved) this.report.index.later++;
    else if (saved.duplicateOf) this.report.index.present++;
    else this.report.index.facts++;
  }

  async memory(): Promise<void> {
    const parts = this.bundle.memory;
    if (parts.length === 0) return;
    let r = { added: 0, present: 0 };
    await this.t.files.changeMemory(`import ${this.t.source}`, (cur) => {
      const merged = mergeEntries(cur, parts, this.bundle.label);
      r = merged;
      return merged.added > 0 ? merged.text : null;
    });
    this.report.memory = { added: r.added, present: r.present, files: parts.map((p) => p.file) };
    for (const p of parts) for (const e of p.entries) this.fact(factOf(e.text));
  }

  async notes(): Promise<void> {
    for (const note of this.bundle.notes) {
      const head = `[imported from ${this.bundle.label}: ${note.file}]`;
      // A heading line of the source stays a line of the note: notes reach the prompt as they are.
      const lines = note.lines.map((l) => scrubSecrets(l).replace(/^(\s*)#/, '$1\\#'));
      let r = { added: 0, present: 0 };
      let hadNote = false;
      await this.t.files.update(`${note.date}.md`, (cur) => {
        hadNote = cur.trim() !== '';
        const missing = appendMissing(cur, lines);
        r = missing;
        if (missing.text === null) return null;
        // The line naming the file goes in once, before the first lines it brings.
        return cur.split('\n').includes(head) ? missing.text : appendMissing(cur, [head, ...lines]).text;
      });
      // Two files of one day (`2026-03-05.md`, `2026-03-05-garden.md`) are one note: reported once.
      const day = this.report.notes.find((n) => n.date === note.date);
      if (day) {
        day.added += r.added;
        day.present += r.present;
      } else this.report.notes.push({ date: note.date, added: r.added, present: r.present, hadNote });
      const session = `import:${this.t.source}:${note.date}`;
      const seen = new Map<string, number>();
      for (const line of lines) {
        const n = (seen.get(line) ?? 0) + 1;
        seen.set(line, n);
        // The row holds the line as written (a heading unescaped).
        const words = line.replace(/^(\s*)\\#/, '$1#').trim();
        if (indexable(line)) this.episode(words, lineTime(note.date, line, this.t.timezone), session, keyOf(this.t.scope, this.t.source, note.date, line, n));
      }
    }
  }

  async history(): Promise<void> {
    if (this.bundle.history.length === 0) return;
    const current = await this.t.files.readHistory();
    const session = `import:${this.t.source}:history`;
    for (const h of this.bundle.history) {
      const text = scrubSecrets(h.text).trim();
      if (current.includes(text)) this.report.history.present++;
      else {
        await this.t.files.appendHistory(text, h.at);
        this.report.history.added++;
      }
      this.episode(text, h.at, session, keyOf(this.t.scope, this.t.source, 'history', h.at.toISOString(), text));
    }
  }

  /** The imported conversations are not summarized again by the nightly consolidation; then the index's writes are kept for good. */
  async finish(): Promise<void> {
    if (this.report.index.off) return;
    for (const s of this.sessions) this.t.index.markConsolidated(s, this.t.scope);
    await this.t.index.persisted();
  }
}
