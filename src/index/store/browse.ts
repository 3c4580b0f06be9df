/**
 * Reads of one chat's rows for the memory page (src/web/data.ts) and /export: plain listings,
 * no ranking. They throw on failure like any read; the callers check `MemoryIndex.browse` for
 * an index that is off.
 */
import type Database from 'better-sqlite3';

type Db = Database.Database;

export interface FactListing {
  id: string;
  content: string;
  confidence: number;
  decayRate: number;
  /** Event time, seconds. */
  t: number;
  retired: number | null;
  accessed: number | null;
}

export interface ScopeRow {
  kind: string;
  content: string;
  confidence: number;
  valid_until: number | null;
  event_time: number;
  created_at: number;
  speaker: string | null;
  source_role: string | null;
  /** The conversation and place in it (episodes): what search's neighbour windows read, kept by /export's copy. */
  session_id: string | null;
  seq: number | null;
}

export class IndexBrowse {
  constructor(private readonly db: Db) {}

  /** The scope's facts, live ones first, newest first. */
  facts(scope: string, max: number): FactListing[] {
    return this.db
      .prepare(
        `SELECT id, content, confidence, decay_rate AS decayRate, event_time AS t, valid_until AS retired, last_accessed AS accessed
         FROM memories WHERE scope = ? AND kind = 'fact' ORDER BY valid_until IS NOT NULL, event_time DESC LIMIT ?`,
      )
      .all(scope, max) as FactListing[];
  }

  /** Entities linked from the scope's live memories, most linked first, each with its three newest memories. */
  entities(scope: string, max: number): Array<{ name: string; type: string; links: number; memories: string[] }> {
    const rows = this.db
      .prepare(
        `SELECT e.id, e.canonical_name AS name, e.type, COUNT(*) AS links FROM memory_entities me
         JOIN memories m ON m.id = me.memory_id JOIN entities e ON e.id = me.entity_id
         WHERE m.scope = ? AND m.valid_until IS NULL GROUP BY e.id ORDER BY links DESC, name LIMIT ?`,
      )
      .all(scope, max) as Array<{ id: string; name: string; type: string; links: number }>;
    const mems = this.db.prepare(
      `SELECT m.content FROM memory_entities me JOIN memories m ON m.id = me.memory_id
       WHERE me.entity_id = ? AND m.scope = ? AND m.valid_until IS NULL ORDER BY m.event_time DESC LIMIT 3`,
    );
    return rows.map((r) => ({
      name: r.name,
      type: r.type,
      links: r.links,
      memories: (mems.all(r.id, scope) as Array<{ content: string }>).map((x) => x.content),
    }));
  }

  /** Memories of the scope per UTC day and kind. */
  dailyCounts(scope: string): Array<{ day: string; kind: string; n: number }> {
    return this.db
      .prepare(`SELECT date(event_time, 'unixepoch') AS day, kind, COUNT(*) AS n FROM memories WHERE scope = ? GROUP BY day, kind`)
      .all(scope) as Array<{ day: string; kind: string; n: number }>;
  }

  /** Every memory of the scope, retired ones included, in event order (for /export). */
  everything(scope: string): ScopeRow[] {
    return this.db
      .prepare(
        'SELECT kind, content, confidence, valid_until, event_time, created_at, speaker, source_role, session_id, seq FROM memories WHERE scope = ? ORDER BY event_time, rowid',
      )
      .all(scope) as ScopeRow[];
  }
}
