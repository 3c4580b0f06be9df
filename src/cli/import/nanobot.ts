/**
 * nanobot's memory (HKUDS/nanobot, docs/memory.md and nanobot/agent/memory.py): in the agent
 * workspace, `memory/MEMORY.md` (long-term facts) and `USER.md` (what it knows of the user),
 * and its history — today `memory/history.jsonl`, one JSON object a line
 * `{"cursor": 42, "timestamp": "2026-04-03 00:02", "content": "…"}`; in older versions
 * `memory/HISTORY.md`, entries that open with `[YYYY-MM-DD HH:MM]` and end with a blank line.
 * Some versions also keep daily files `memory/YYYY-MM-DD.md`. Times are the machine's local
 * time, read here in the configured TZ. `SOUL.md` is the bot's voice, not memory.
 */
import { TZDate } from '@date-fns/tz';
import type { HistoryPart, ImportBundle, MemoryPart } from './bundle.js';
import { datedNotes, isDay, memoryPart, noteNotMemory } from './openclaw.js';
import { unixLines, type SourceTree } from './source.js';

const STAMP = /^\[?(\d{4}-\d{2}-\d{2})[ T](\d{2}):(\d{2})/;

/** A `YYYY-MM-DD HH:MM` time in `timezone`, or undefined. */
export function localTime(stamp: string, timezone: string): Date | undefined {
  const m = STAMP.exec(stamp.trim());
  if (!m || !isDay(m[1]!) || Number(m[2]) > 23 || Number(m[3]) > 59) return undefined;
  const [y, mo, d] = m[1]!.split('-').map(Number) as [number, number, number];
  return new Date(new TZDate(y, mo - 1, d, Number(m[2]), Number(m[3]), timezone).getTime());
}

/** history.jsonl: an entry per line; a line that is not such an object is named in the report. */
function jsonlHistory(tree: SourceTree, file: string, text: string, timezone: string, now: Date): HistoryPart[] {
  const out: HistoryPart[] = [];
  unixLines(text)
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      let o: unknown;
      try {
        o = JSON.parse(line);
      } catch {
        tree.skip(`${file}:${i + 1}`, 'not JSON');
        return;
      }
      const entry = (o ?? {}) as { timestamp?: unknown; content?: unknown };
      if (typeof entry.content !== 'string' || !entry.content.trim()) {
        tree.skip(`${file}:${i + 1}`, 'no "content" text');
        return;
      }
      const at = typeof entry.timestamp === 'string' ? localTime(entry.timestamp, timezone) : undefined;
      if (!at) tree.skip(`${file}:${i + 1}`, 'no readable "timestamp": imported with the time of the import');
      out.push({ file, at: at ?? now, text: unixLines(entry.content).trim() });
    });
  return out;
}

/** HISTORY.md (older nanobot): an entry begins at each `[YYYY-MM-DD HH:MM]` line; text before the first joins it. */
export function markdownHistory(file: string, text: string, timezone: string, now: Date): HistoryPart[] {
  const out: HistoryPart[] = [];
  const lead: string[] = [];
  for (const line of unixLines(text).split('\n')) {
    const at = /^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}\]/.test(line) ? localTime(line, timezone) : undefined;
    if (at) out.push({ file, at, text: line });
    else if (out.length === 0) lead.push(line);
    else out[out.length - 1]!.text += `\n${line}`;
  }
  const before = lead.join('\n').trim();
  for (const h of out) h.text = h.text.trim();
  if (before) {
    if (out.length > 0) out[0]!.text = `${before}\n${out[0]!.text}`;
    else out.push({ file, at: now, text: before });
  }
  return out;
}

export async function readNanobot(tree: SourceTree, timezone: string, now = new Date()): Promise<ImportBundle> {
  const memory: MemoryPart[] = [];
  for (const file of ['memory/MEMORY.md', 'USER.md']) {
    const part = await memoryPart(tree, file);
    if (part) memory.push(part);
  }
  const history: HistoryPart[] = [];
  const jsonl = await tree.read('memory/history.jsonl');
  if (jsonl !== undefined) history.push(...jsonlHistory(tree, 'memory/history.jsonl', jsonl, timezone, now));
  const md = await tree.read('memory/HISTORY.md');
  if (md !== undefined) history.push(...markdownHistory('memory/HISTORY.md', md, timezone, now));
  const known = new Set(['MEMORY.md', 'HISTORY.md', 'history.jsonl']);
  // Its cursors and the git folder of its memory versions are bookkeeping, not memory.
  const notes = await datedNotes(tree, 'memory', 'nanobot', (n) => known.has(n) || n.startsWith('.'));
  await noteNotMemory(tree, ['SOUL.md', 'AGENTS.md', 'TOOLS.md', 'HEARTBEAT.md']);
  return { label: 'nanobot', memory, notes, history, skipped: tree.skipped };
}
