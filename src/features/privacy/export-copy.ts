/**
 * The exact copy at the end of an /export: the chat's memory files and index rows as JSON
 * lines, so `npm run memory -- import --from membot FILE` gives back the same files byte for
 * byte and the same search results. The Markdown above it is for reading (headings nested,
 * lines joined, times cut to the minute); this part is for the machine and loses nothing.
 *
 * One JSON object per line inside a fenced block: a line of JSON never holds a raw line break
 * and always starts with `{`, so no text inside can close the fence.
 */
import type { MemoryFiles } from '../../memory/files.js';
import type { ScopeRow } from '../../index/memory-index.js';

export const COPY_HEADING = '## Exact copy (for import)';
const FENCE_OPEN = '```jsonl membot-export/1';
const FENCE_CLOSE = '```';

/** A memory file of the chat: MEMORY.md, a daily note, HISTORY.md or a monthly history file. */
export interface CopiedFile {
  file: string;
  text: string;
}

export type CopiedRow = Pick<
  ScopeRow,
  'kind' | 'content' | 'confidence' | 'valid_until' | 'event_time' | 'created_at' | 'speaker' | 'source_role' | 'session_id' | 'seq'
>;

export interface ExportCopy {
  files: CopiedFile[];
  rows: CopiedRow[];
}

/** The chat's memory files as the bot reads them: MEMORY.md, every note, HISTORY.md and its months. */
export async function copiedFiles(files: MemoryFiles): Promise<CopiedFile[]> {
  const out: CopiedFile[] = [{ file: 'MEMORY.md', text: await files.readMemory() }];
  for (const n of await files.listNotes()) out.push({ file: `${n.date}.md`, text: await files.readNote(n.date) });
  const history = await files.readHistory().catch(() => '');
  out.push({ file: 'HISTORY.md', text: history });
  // The monthly files repeat HISTORY.md's entries by month (files.ts appendHistory).
  const months = new Set([...history.matchAll(/^## (\d{4}-\d{2})-\d{2}T/gm)].map((m) => m[1]!));
  for (const month of [...months].sort()) {
    const name = `HISTORY-${month}.md`;
    const text = await files.readNoteOrHistory(name).catch(() => undefined);
    if (text) out.push({ file: name, text });
  }
  return out.filter((f) => f.text !== '');
}

/** The copy's lines (heading, a sentence, the fenced JSON lines). */
export function formatCopy(copy: ExportCopy): string[] {
  const rows = copy.rows.map((r) => {
    const row: CopiedRow = {
      kind: r.kind,
      content: r.content,
      confidence: r.confidence,
      valid_until: r.valid_until,
      event_time: r.event_time,
      created_at: r.created_at,
      speaker: r.speaker,
      source_role: r.source_role,
      session_id: r.session_id,
      seq: r.seq,
    };
    return JSON.stringify({ row });
  });
  return [
    COPY_HEADING,
    '',
    'The memory files and index rows above, exactly, one JSON object a line: `npm run memory -- import --from membot FILE --chat CHANNEL:ID` takes them back.',
    '',
    FENCE_OPEN,
    ...copy.files.map((f) => JSON.stringify({ file: f.file, text: f.text })),
    ...rows,
    FENCE_CLOSE,
  ];
}

const isText = (v: unknown): v is string => typeof v === 'string';
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const orNull = <T>(v: unknown, ok: (v: unknown) => v is T): T | null | undefined => (v === null ? null : ok(v) ? v : undefined);

/** One row as read from an untrusted file: every field checked, or undefined. */
function checkedRow(r: Record<string, unknown>): CopiedRow | undefined {
  if (!isText(r.kind) || !isText(r.content) || !isNum(r.confidence) || !isNum(r.event_time) || !isNum(r.created_at)) return undefined;
  const valid_until = orNull(r.valid_until, isNum);
  const speaker = orNull(r.speaker, isText);
  const source_role = orNull(r.source_role, isText);
  const session_id = orNull(r.session_id ?? null, isText);
  const seq = orNull(r.seq ?? null, isNum);
  if (valid_until === undefined || speaker === undefined || source_role === undefined || session_id === undefined || seq === undefined) return undefined;
  return {
    kind: r.kind,
    content: r.content,
    confidence: r.confidence,
    valid_until,
    event_time: r.event_time,
    created_at: r.created_at,
    speaker,
    source_role,
    session_id,
    seq,
  };
}

/**
 * The copy in an export's text, or undefined when it has none (an export made before the copy
 * was added). Lines that are not a file or a row of the expected shape are counted in `bad`.
 */
export function parseCopy(text: string): (ExportCopy & { bad: number }) | undefined {
  const start = text.lastIndexOf(`\n${FENCE_OPEN}\n`);
  if (start < 0) return undefined;
  const body = text.slice(start + FENCE_OPEN.length + 2);
  const end = body.indexOf(`\n${FENCE_CLOSE}`);
  const lines = (end < 0 ? body : body.slice(0, end)).split('\n');
  const out: ExportCopy & { bad: number } = { files: [], rows: [], bad: 0 };
  for (const line of lines) {
    if (!line.trim()) continue;
    let item: unknown;
    try {
      item = JSON.parse(line);
    } catch {
      out.bad++;
      continue;
    }
    const o = (item ?? {}) as Record<string, unknown>;
    if (isText(o.file) && isText(o.text)) out.files.push({ file: o.file, text: o.text });
    else {
      const row = o.row && typeof o.row === 'object' ? checkedRow(o.row as Record<string, unknown>) : undefined;
      if (row) out.rows.push(row);
      else out.bad++;
    }
  }
  return out;
}
