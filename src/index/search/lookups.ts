/**
 * Reads by name rather than by query: an entity's profile with the memories that mention it
 * (get_entity_info), and a scope's newest reflection (the weekly insight). Results in the
 * search's own shape, so the tools print them like search hits.
 */
import type { Db } from '../store/db.js';
import type { MemoryRow } from '../store/repository.js';
import { ROW_COLUMNS, toResult, type SearchResult } from './result.js';

export interface EntityInfo {
  id: string;
  name: string;
  type: string;
  aliases: string[];
  mentions: number;
  memories: SearchResult[];
}

/** get_entity_info: the entity's profile and the memories of this scope that mention it. */
export function entityInfo(db: Db, name: string, scope: string, limit = 10): EntityInfo | null {
  const key = name.toLowerCase().replace(/^[@#]/, '').trim();
  const e = db
    .prepare(
      `SELECT e.id, e.canonical_name, e.type, e.aliases, e.mention_count FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
       WHERE a.scope = ? AND a.alias = ? AND EXISTS (SELECT 1 FROM memory_entities me JOIN memories m ON m.id = me.memory_id WHERE me.entity_id = e.id AND m.scope = ?)
       ORDER BY e.mention_count DESC LIMIT 1`,
    )
    .get(scope, key, scope) as { id: string; canonical_name: string; type: string; aliases: string; mention_count: number } | undefined;
  if (!e) return null;
  const rows = db
    .prepare(
      `SELECT ${ROW_COLUMNS} FROM memory_entities me JOIN memories m ON m.id = me.memory_id
       WHERE me.entity_id = ? AND m.scope = ? AND m.valid_until IS NULL ORDER BY m.event_time DESC LIMIT ?`,
    )
    .all(e.id, scope, limit) as MemoryRow[];
  return {
    id: e.id,
    name: e.canonical_name,
    type: e.type,
    aliases: JSON.parse(e.aliases) as string[],
    mentions: e.mention_count,
    memories: rows.map((r) => toResult(r, 0)),
  };
}

/** The newest live reflection of a scope. */
export function latestReflection(db: Db, scope: string): SearchResult | undefined {
  const row = db
    .prepare(`SELECT ${ROW_COLUMNS} FROM memories m WHERE m.kind = 'reflection' AND m.scope = ? AND m.valid_until IS NULL ORDER BY m.created_at DESC LIMIT 1`)
    .get(scope) as MemoryRow | undefined;
  return row ? toResult(row, 0) : undefined;
}
