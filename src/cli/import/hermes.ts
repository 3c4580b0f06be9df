/**
 * Hermes Agent's memory (NousResearch/hermes-agent, tools/memory_tool.py): two bounded files in
 * `~/.hermes/memories/` — `MEMORY.md` (the agent's own notes: environment, conventions, what it
 * learned) and `USER.md` (what it knows of the user) — each a list of entries separated by a
 * line holding only `§` (ENTRY_DELIMITER "\n§\n"); an entry may span several lines. PATH is the
 * Hermes home (with `memories/`) or the memories folder itself.
 */
import type { ImportBundle, MemoryPart } from './bundle.js';
import { asItem } from './bundle.js';
import { unixLines, type SourceTree } from './source.js';

/** Where each file's entries go in MEMORY.md. */
const SECTIONS: Record<string, string> = { 'MEMORY.md': 'Notes (from Hermes)', 'USER.md': 'About the user (from Hermes)' };

/** The entries of a Hermes memory file: split at `§` lines, trimmed, empty and repeated ones left out (as Hermes loads them). */
export function hermesEntries(text: string): string[] {
  const entries = unixLines(text)
    .split(/\n[ \t]*§[ \t]*\n/)
    .map((e) => e.trim())
    .filter((e) => e !== '' && e !== '§');
  return [...new Set(entries)];
}

export async function readHermes(tree: SourceTree): Promise<ImportBundle> {
  const dir = (await tree.isFolder('memories')) ? 'memories' : '.';
  const memory: MemoryPart[] = [];
  for (const name of ['MEMORY.md', 'USER.md']) {
    const file = dir === '.' ? name : `${dir}/${name}`;
    const raw = await tree.read(file);
    if (raw === undefined) continue;
    const entries = hermesEntries(raw);
    if (entries.length === 0) continue;
    const section = SECTIONS[name]!;
    memory.push({
      file,
      text: `## ${section}\n${entries.map(asItem).join('\n')}\n`,
      entries: entries.map((text) => ({ section, text })),
    });
  }
  return { label: 'Hermes', memory, notes: [], history: [], skipped: tree.skipped };
}
