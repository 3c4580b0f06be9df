/**
 * `/export`: one Markdown file with everything the bot keeps for a chat — MEMORY.md, the facts
 * (with confidence, retired ones marked), weekly insights, every daily note, the history log,
 * the indexed messages and the current conversation, then an exact copy of the memory files and
 * rows for `npm run memory -- import --from membot` (export-copy.ts). Built from the same files
 * and rows the bot reads; nothing is written by building it.
 */
import type { Chat } from '../../core/chat.js';
import type { MemoryIndex } from '../../index/memory-index.js';
import type { SessionStore } from '../../sessions/store.js';
import type { MemoryService } from '../../memory/service.js';
import { copiedFiles, formatCopy } from './export-copy.js';

export interface ExportDeps {
  memory: MemoryService;
  index: MemoryIndex;
  sessions: SessionStore;
}

const day = (sec: number): string => new Date(sec * 1000).toISOString().slice(0, 10);
const minute = (iso: string): string => iso.replace('T', ' ').slice(0, 16);

/** Headings of an embedded file pushed below the export's own (## → ####). */
function nest(text: string, levels: number): string {
  return text.replace(/^(#{1,6})(\s)/gm, (_m, h: string, sp: string) => `${'#'.repeat(Math.min(6, h.length + levels))}${sp}`);
}

export async function buildExport(deps: ExportDeps, chat: Chat, now = new Date()): Promise<string> {
  const files = deps.memory.forChat(chat.channel, chat.chatId);
  const scope = deps.memory.scopeKey(chat.channel, chat.chatId);
  const out: string[] = [
    `# Memory export — ${chat.channel}:${chat.chatId}`,
    '',
    `Exported ${minute(now.toISOString())} UTC. Everything this bot keeps for this chat${scope === 'global' ? ' (MEMORY_SCOPE=global: the memory shared by every chat)' : ''}.`,
    '',
    '## Long-term memory (MEMORY.md)',
    '',
  ];
  const memory = (await files.readMemory()).trim();
  out.push(memory ? nest(memory, 2) : '_(empty)_', '');

  const browse = deps.index.browse;
  const rows = browse ? browse.everything(scope) : [];
  const facts = rows.filter((r) => r.kind === 'fact');
  out.push('## Facts', '');
  if (!browse) out.push(`_(the search index is off: ${deps.index.disabledReason ?? 'unavailable'})_`);
  else if (facts.length === 0) out.push('_(none)_');
  for (const f of facts) {
    out.push(
      `- ${f.content.replace(/\s*\n\s*/g, ' ')} — confidence ${f.confidence.toFixed(2)}, since ${day(f.created_at)}${f.valid_until ? `, retired ${day(f.valid_until)}` : ''}`,
    );
  }
  out.push('');
  const insights = rows.filter((r) => r.kind === 'reflection');
  if (insights.length > 0) {
    out.push('## Weekly insights', '');
    for (const r of insights) out.push(`- ${day(r.created_at)}: ${r.content.replace(/\s*\n\s*/g, ' ')}`);
    out.push('');
  }

  out.push('## Daily notes', '');
  const notes = await files.listNotes();
  if (notes.length === 0) out.push('_(none)_', '');
  for (const n of notes) out.push(`### ${n.date}`, '', (await files.readNote(n.date)).trimEnd(), '');

  out.push('## History', '');
  const history = (await files.readHistory().catch(() => '')).trim();
  out.push(history ? nest(history, 1) : '_(none)_', '');

  const episodes = rows.filter((r) => r.kind === 'episode');
  out.push(`## Indexed messages (${episodes.length})`, '');
  for (const e of episodes)
    out.push(`- ${minute(new Date(e.event_time * 1000).toISOString())} ${e.speaker ?? e.source_role ?? '?'}: ${e.content.replace(/\s*\n\s*/g, ' ')}`);
  if (episodes.length === 0) out.push('_(none)_');
  out.push('');

  const session = await deps.sessions.getOrCreate(chat.channel, chat.chatId);
  out.push('## Current conversation', '');
  if (session.messages.length === 0) out.push('_(empty)_');
  for (const m of session.messages) {
    const who =
      m.role === 'user' ? (m.senderName ?? 'User') : m.role === 'tool' ? `Tool ${m.toolName ?? ''}`.trim() : m.role === 'assistant' ? 'Assistant' : 'System';
    out.push(`**${who}** (${minute(m.timestamp)} UTC): ${m.content}`, '');
  }
  if (session.messages.length === 0) out.push('');
  out.push(...formatCopy({ files: await copiedFiles(files), rows }));
  return `${out.join('\n').trimEnd()}\n`;
}
