/**
 * The long-term memory tools of seed 003: search_memory, remember_fact, correct_fact,
 * confirm_fact, memory_stats, get_entity_info. Each works only inside the scope of the chat the
 * turn belongs to: an id from another chat is simply "not found".
 */
import type { FactInput, MemoryIndex, SavedFact } from '../../index/memory-index.js';
import type { MemoryService } from '../../memory/service.js';
import type { Embedder } from '../../index/upkeep/embeddings.js';
import type { SearchResult } from '../../index/search/result.js';
import { correctionNote } from '../../index/search/superseded.js';
import type { Tool, ToolContext } from '../../tools/types.js';
import type { TurnWrites } from './turn-writes.js';

const KINDS = ['episode', 'fact', 'reflection'] as const;

export function formatResults(results: SearchResult[]): string {
  if (results.length === 0) return 'Nothing found.';
  return results
    .map(
      (r) =>
        `[${r.id}] ${r.date.slice(0, 16).replace('T', ' ')} ${r.kind}${r.speaker ? ` (${r.speaker})` : ''}: ${r.content.length > 500 ? `${r.content.slice(0, 500)}…` : r.content}${r.correctedBy ? ` ${correctionNote(r.correctedBy.content, r.correctedBy.date)} [${r.correctedBy.id}]` : ''}`,
    )
    .join('\n');
}

/** Whether what this process wrote is kept for good (MemoryIndex.persisted: in PostgreSQL mode, written to the database). */
export function keptForGood(index: MemoryIndex): Promise<boolean> {
  return index.persisted().then(
    () => true,
    () => false,
  );
}

/**
 * `said` once what the tool wrote is kept for good; else the model reads that it is kept here
 * and written later, so it never tells the user "saved" about a fact only this process holds.
 */
async function whenKept(index: MemoryIndex, said: string): Promise<string> {
  return (await keptForGood(index)) ? said : `${said} Not written to the database yet (it is not answering): kept here and written when it answers.`;
}

/**
 * Saves one fact as remember_fact does: after a /forget's scrub (which holds the index's writes;
 * the fact waits for it instead of being dropped), its vector queued. Undefined when nothing
 * was saved (an empty fact, or the index could not write it).
 */
export async function saveFact(index: MemoryIndex, fact: FactInput, embedder?: Embedder): Promise<SavedFact | undefined> {
  await index.whenWritable();
  const [saved] = index.saveFacts([fact]);
  if (saved && !saved.duplicateOf) embedder?.enqueue(saved.id, fact.content);
  return saved;
}

/** `writes`: where a change that took effect is noted for the turn (RememberRequest 35 asks). */
export function createMemoryIndexTools(index: MemoryIndex, memory: MemoryService, embedder?: Embedder, writes?: TurnWrites): Tool<any>[] {
  const scopeOf = (ctx: ToolContext) => memory.scopeKey(ctx.chat.channel, ctx.chat.chatId);
  const off = 'The long-term memory index is not available right now; MEMORY.md and the notes still are (memory_read, notes_search).';

  const search: Tool<{ query: string; kind?: (typeof KINDS)[number]; limit?: number }> = {
    name: 'search_memory',
    description: 'Search past conversations, facts and reflections: "what did I say about…", names, dates, plans.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 500 },
        kind: { type: 'string', enum: KINDS, description: 'Only this kind.' },
        limit: { type: 'integer', minimum: 1, maximum: 30 },
      },
      required: ['query'],
      additionalProperties: false,
    },
    async execute({ query, kind, limit }, ctx) {
      if (!index.enabled) return off;
      const vector = await embedder?.embedQuery(query);
      return formatResults(index.search(query, { scope: scopeOf(ctx), kinds: kind ? [kind] : undefined, limit: limit ?? 8, vector }));
    },
  };

  const remember: Tool<{ fact: string }> = {
    name: 'remember_fact',
    once: true,
    description: 'Save a durable fact about the user as a standalone sentence ("Ann\'s cat is called Miso").',
    parameters: { type: 'object', properties: { fact: { type: 'string', minLength: 3, maxLength: 1000 } }, required: ['fact'], additionalProperties: false },
    async execute({ fact }, ctx) {
      if (!index.enabled) return off;
      const saved = await saveFact(index, { content: fact, scope: scopeOf(ctx), sessionId: ctx.conversationId, sourceIds: [] }, embedder);
      if (!saved) return 'Nothing saved (empty fact).';
      writes?.wrote(ctx.turnId);
      if (saved.duplicateOf) return `Already known as ${saved.duplicateOf}.`;
      return whenKept(
        index,
        `Saved as ${saved.id}.${saved.supersedes?.length ? ` It may contradict ${saved.supersedes.join(', ')} (their confidence was lowered).` : ''}`,
      );
    },
  };

  const correct: Tool<{ id: string; new_content: string }> = {
    name: 'correct_fact',
    once: true,
    description: 'Replace a wrong fact (id from search_memory); the old one is kept as history.',
    parameters: {
      type: 'object',
      properties: { id: { type: 'string', pattern: '^fact_[0-9a-f]+$' }, new_content: { type: 'string', minLength: 3, maxLength: 1000 } },
      required: ['id', 'new_content'],
      additionalProperties: false,
    },
    async execute({ id, new_content }, ctx) {
      if (!index.enabled) return off;
      await index.whenWritable();
      const newId = index.correctFact(id, scopeOf(ctx), new_content, ctx.conversationId);
      // The replacement needs a vector like any new fact, or vector search finds only the retired one's words.
      if (newId) embedder?.enqueue(newId, new_content);
      if (newId) writes?.wrote(ctx.turnId);
      return newId ? whenKept(index, `Corrected: ${id} retired, ${newId} saved.`) : `No active fact ${id} found.`;
    },
  };

  const confirm: Tool<{ id: string }> = {
    name: 'confirm_fact',
    description: 'Mark a fact as confirmed by the user: it will never fade.',
    parameters: { type: 'object', properties: { id: { type: 'string', pattern: '^fact_[0-9a-f]+$' } }, required: ['id'], additionalProperties: false },
    async execute({ id }, ctx) {
      if (!index.enabled) return off;
      await index.whenWritable();
      if (!index.confirmFact(id, scopeOf(ctx))) return `No active fact ${id} found.`;
      writes?.wrote(ctx.turnId);
      return whenKept(index, `Confirmed ${id}; it is now protected from decay.`);
    },
  };

  const stats: Tool<Record<string, never>> = {
    name: 'memory_stats',
    description: 'How much is remembered, by kind, and the latest time.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    async execute(_args, ctx) {
      if (!index.enabled) return off;
      return JSON.stringify(index.stats(scopeOf(ctx)));
    },
  };

  const entity: Tool<{ name: string }> = {
    name: 'get_entity_info',
    description: 'Everything remembered about a person, place, project or tag.',
    parameters: { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['name'], additionalProperties: false },
    async execute({ name }, ctx) {
      if (!index.enabled) return off;
      const info = index.entityInfo(name, scopeOf(ctx));
      if (!info) return `Nothing is known about "${name}".`;
      return `${info.name} (${info.type}; also: ${info.aliases.join(', ')}; mentioned ${info.mentions} times)\n${formatResults(info.memories)}`;
    },
  };

  return [search, remember, correct, confirm, stats, entity];
}
