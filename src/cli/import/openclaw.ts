/**
 * OpenClaw's memory, as its docs lay it out (openclaw/openclaw, docs/concepts/memory.md): the
 * agent workspace holds `MEMORY.md` (curated long-term memory; `memory.md` is read as well) and
 * `memory/YYYY-MM-DD.md`, one append-only log per day. `USER.md` (what it knows of the user)
 * is taken like MEMORY.md. A dated file with a suffix (`memory/2026-03-04-some-topic.md`, as its
 * hooks write) belongs to that day too. Other files are the persona and instructions, not memory.
 */
import { markdownEntries, type ImportBundle, type MemoryPart, type NotePart } from './bundle.js';
import { unixLines, type SourceTree } from './source.js';

/** Files of a workspace that are not memory (the assistant's persona, instructions, tools): named in the report, not read. */
const NOT_MEMORY = ['SOUL.md', 'IDENTITY.md', 'AGENTS.md', 'TOOLS.md', 'HEARTBEAT.md', 'BOOTSTRAP.md'];

/** `file` of the source as a long-term memory part (undefined when missing or refused). */
export async function memoryPart(tree: SourceTree, file: string): Promise<MemoryPart | undefined> {
  const raw = await tree.read(file);
  if (raw === undefined) return undefined;
  const text = unixLines(raw).trim();
  if (!text) return undefined;
  return { file, text: `${text}\n`, entries: markdownEntries(text) };
}

const DATED = /^(\d{4}-\d{2}-\d{2})(?:[-_ ].*)?\.md$/;

/** A real calendar day (2026-02-30 is not one). */
export function isDay(date: string): boolean {
  const d = new Date(`${date}T12:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === date;
}

/** The dated notes of folder `dir` (`YYYY-MM-DD.md`, or with a suffix); anything else there is named in the report. */
export async function datedNotes(tree: SourceTree, dir: string, label: string, others: (name: string) => boolean = () => false): Promise<NotePart[]> {
  const out: NotePart[] = [];
  for (const name of await tree.list(dir)) {
    const rel = `${dir}/${name}`;
    const m = DATED.exec(name);
    if (!m || !isDay(m[1]!)) {
      if (!others(name)) tree.skip((await tree.isFolder(rel)) ? `${rel}/` : rel, `not a daily note (${label} keeps its days as ${dir}/YYYY-MM-DD.md)`);
      continue;
    }
    const raw = await tree.read(rel);
    if (raw === undefined) continue;
    const lines = unixLines(raw)
      .split('\n')
      .filter((l) => l.trim() !== '');
    if (lines.length === 0) tree.skip(rel, 'empty');
    else out.push({ date: m[1]!, file: rel, lines });
  }
  return out;
}

/** Names the persona and instruction files found at the top of PATH (not read: they are not memory). */
export async function noteNotMemory(tree: SourceTree, names: string[]): Promise<void> {
  for (const n of names) if (await tree.exists(n)) tree.skip(n, "the assistant's persona or instructions, not memory (membot's own is SYSTEM.md)");
}

export async function readOpenClaw(tree: SourceTree): Promise<ImportBundle> {
  const memory: MemoryPart[] = [];
  for (const file of ['MEMORY.md', 'memory.md', 'USER.md']) {
    const part = await memoryPart(tree, file);
    // On a case-insensitive disk memory.md is MEMORY.md: read once.
    if (part && !memory.some((p) => p.text === part.text)) memory.push(part);
  }
  const notes = await datedNotes(tree, 'memory', 'OpenClaw');
  await noteNotMemory(tree, NOT_MEMORY);
  return { label: 'OpenClaw', memory, notes, history: [], skipped: tree.skipped };
}
