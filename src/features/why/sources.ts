/**
 * What one turn's answer was built from, read off the turn as it ran (never recomputed later):
 * the `# Memory` section ContextBuilding 20 put in the prompt (MEMORY.md entries, note lines),
 * the `# Relevant Memory` hits it noted with their ids (`turn.sources`), and what the memory
 * tools the model called in this turn returned (the tool messages after the user's).
 * Each kind is capped, so a long day of notes cannot crowd out the facts.
 */
import type { Turn } from '../../turn/turn.js';
import { cutChars, oneLine } from '../../memory/notes.js';
import { EXCERPT_CHARS, MAX_ITEMS, type WhyItem } from './record.js';

/** The tools that read memory: what they returned is part of what the answer was built from. */
export const READING_TOOLS: ReadonlySet<string> = new Set(['search_memory', 'get_entity_info', 'memory_read', 'notes_read', 'notes_search']);

/** Items kept per kind, at most. */
const PER_KIND = { memory: 6, note: 6, fact: 8, message: 8, tool: 8 } as const;
/** Lines kept of one tool result. */
const LINES_PER_RESULT = 4;

export function excerpt(text: string): string {
  const line = oneLine(text).trim();
  const cut = cutChars(line, EXCERPT_CHARS);
  return cut === line ? line : `${cut}…`;
}

/** MEMORY.md entries and note lines of the `# Memory` block (memory/context.ts lays it out). */
function memoryItems(block: string): WhyItem[] {
  const out: WhyItem[] = [];
  let kind: 'memory' | 'note' | undefined;
  for (const raw of block.split('\n')) {
    const line = raw.trim();
    if (line === '## Long-term Memory') kind = 'memory';
    else if (line === "## Today's Notes" || line === '## Recent Context') kind = 'note';
    else if (kind && line && !line.startsWith('#')) out.push({ kind, text: excerpt(line.replace(/^[-*]\s+/, '')) });
  }
  // The newest note lines are the last ones of today's notes.
  const notes = out.filter((i) => i.kind === 'note');
  return [...out.filter((i) => i.kind === 'memory').slice(0, PER_KIND.memory), ...notes.slice(-PER_KIND.note)];
}

/** A tool result's lines: a search hit (`[id] date kind: text`) keeps its id. */
function toolItems(tool: string, content: string): WhyItem[] {
  return content
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(0, LINES_PER_RESULT)
    .map((line) => {
      const hit = /^\[([A-Za-z]+_[0-9a-f]+)\]\s+\S+\s+\S+\s+[a-z]+(?:\s+\([^)]*\))?:\s+(.*)$/.exec(line);
      return hit ? { kind: 'tool' as const, tool, ref: hit[1], text: excerpt(hit[2]!) } : { kind: 'tool' as const, tool, text: excerpt(line) };
    });
}

export function itemsOf(turn: Turn): WhyItem[] {
  const memory = turn.promptSections.find((s) => s.name === 'memory');
  const relevant = turn.sources.map((s): WhyItem => ({ kind: s.kind, ref: s.ref, text: excerpt(s.text) }));
  const messages = turn.session.messages;
  const at = messages.findIndex((m) => m.id === turn.userMessage.id);
  const tools = (at >= 0 ? messages.slice(at + 1) : [])
    .filter((m) => m.role === 'tool' && m.toolName !== undefined && READING_TOOLS.has(m.toolName))
    .flatMap((m) => toolItems(m.toolName!, m.content));
  return [
    ...(memory ? memoryItems(memory.content) : []),
    ...relevant.filter((i) => i.kind === 'fact').slice(0, PER_KIND.fact),
    ...relevant.filter((i) => i.kind === 'message').slice(0, PER_KIND.message),
    ...tools.slice(0, PER_KIND.tool),
  ].slice(0, MAX_ITEMS);
}
