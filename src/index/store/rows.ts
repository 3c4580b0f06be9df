/**
 * What one memory and one conversation's mark are, column by column, as memory.db stores them:
 * what the PostgreSQL twin (index/pg/) copies and what a move between the two (Portable) carries.
 */

/** A conversation's consolidation mark (memory.db's `sessions`). */
export interface SessionMark {
  session_id: string;
  scope: string | null;
  first_seen_at: number;
  consolidated_at: number | null;
}

/** The columns of memory.db's `memories` that are a memory's own (not derived from its text), in order. */
export const MEMORY_COLUMNS = [
  'id',
  'kind',
  'content',
  'session_id',
  'event_time',
  'created_at',
  'valid_until',
  'confidence',
  'access_count',
  'last_accessed',
  'decay_rate',
  'source_ids',
  'source_role',
  'tags',
  'attributes',
  'scope',
  'speaker',
  'source_message_id',
  'seq',
] as const;
