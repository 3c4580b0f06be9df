/**
 * Facts as the tools and the memory page change them one at a time (read, correct, confirm),
 * a consolidation's record, and a scope's counts. Plain SQL on the open file: the facade
 * (memory-index.ts) runs each call through the outage guard.
 */
import type { Db } from './db.js';
import type { IndexWriter } from './repository.js';

export interface IndexStats {
  byKind: Record<string, number>;
  latest: string | null;
  entities: number;
  vectors: boolean;
}

export interface FactView {
  id: string;
  content: string;
  confidence: number;
  valid: boolean;
}

/**
 * A fact a correction replaced (correct_fact, the memory page): its text, when it was said and
 * retired, and the fact that holds the value now — the end of the chain when the replacement
 * was corrected again. What the prompt and search use to mark the old value as no longer current.
 */
export interface Correction {
  /** The retired fact. */
  id: string;
  old: string;
  /** When the old fact was said and when it was corrected (seconds). */
  since: number;
  until: number;
  /** The live fact that holds the value now (its text, and when it was said). */
  currentId: string;
  current: string;
  currentSince: number;
}

export class FactTables {
  constructor(
    private readonly db: Db,
    private readonly writer: IndexWriter,
  ) {}

  /** A fact of this scope, or undefined (ids from another scope are "not found"). */
  get(id: string, scope: string): FactView | undefined {
    const r = this.db.prepare("SELECT id, content, confidence, valid_until FROM memories WHERE id = ? AND scope = ? AND kind = 'fact'").get(id, scope) as
      | { id: string; content: string; confidence: number; valid_until: number | null }
      | undefined;
    return r ? { id: r.id, content: r.content, confidence: r.confidence, valid: r.valid_until === null } : undefined;
  }

  /** correct_fact: retires the old fact and saves the replacement, which records `supersedes`. */
  correct(id: string, scope: string, content: string, sessionId?: string): string | null {
    const db = this.db;
    let replacement: string | null = null;
    db.transaction(() => {
      const now = Math.floor(Date.now() / 1000);
      const r = db.prepare("UPDATE memories SET valid_until = ? WHERE id = ? AND scope = ? AND kind = 'fact' AND valid_until IS NULL").run(now, id, scope);
      if (r.changes === 0) return;
      db.prepare('DELETE FROM memory_entities WHERE memory_id = ?').run(id);
      const saved = this.writer.saveFacts([{ content, scope, sessionId, sourceIds: [id] }]);
      replacement = saved[0]?.duplicateOf ?? saved[0]?.id ?? null;
      if (replacement) {
        db.prepare("UPDATE memories SET attributes = json_set(attributes, '$.supersedes', json(?)) WHERE id = ?").run(JSON.stringify([id]), replacement);
        // The old fact names its replacement: a retirement by decay names none, so only a
        // correction makes the old value "later corrected" in the prompt and search.
        db.prepare("UPDATE memories SET attributes = json_set(attributes, '$.corrected_by', ?) WHERE id = ?").run(replacement, id);
      }
    })();
    return replacement;
  }

  /**
   * The scope's corrected facts, oldest correction first, each with the live fact that holds
   * its value now (a chain Porto → Braga → Lisbon gives Lisbon for both older ones). A chain
   * whose end was retired or forgotten gives nothing: no current value to point to.
   */
  corrections(scope: string): Correction[] {
    const rows = this.db
      .prepare(
        `SELECT o.id, o.content AS old, o.event_time AS since, o.valid_until AS until, n.id AS next, n.content AS nextContent,
                n.event_time AS nextSince, n.valid_until IS NULL AS live
         FROM memories o JOIN memories n ON n.id = json_extract(o.attributes, '$.corrected_by') AND n.scope = o.scope AND n.kind = 'fact'
         WHERE o.scope = ? AND o.kind = 'fact' AND o.valid_until IS NOT NULL ORDER BY o.valid_until, o.rowid`,
      )
      .all(scope) as Array<{ id: string; old: string; since: number; until: number; next: string; nextContent: string; nextSince: number; live: number }>;
    const byId = new Map(rows.map((r) => [r.id, r]));
    const out: Correction[] = [];
    for (const r of rows) {
      let end = r;
      // Follow the chain to its live end (bounded: a cycle cannot form, but a damaged row must not hang a turn).
      for (let hops = 0; !end.live && hops < rows.length; hops++) {
        const next = byId.get(end.next);
        if (!next) break;
        end = next;
      }
      if (end.live)
        out.push({ id: r.id, old: r.old, since: r.since, until: r.until, currentId: end.next, current: end.nextContent, currentSince: end.nextSince });
    }
    return out;
  }

  /** confirm_fact: protected from decay for good. */
  confirm(id: string, scope: string): boolean {
    const r = this.db
      .prepare(
        "UPDATE memories SET decay_rate = 0.0, confidence = 1.0, attributes = json_remove(attributes, '$.base_confidence') WHERE id = ? AND scope = ? AND kind = 'fact' AND valid_until IS NULL",
      )
      .run(id, scope);
    return r.changes > 0;
  }

  /** These facts were just retrieved: their decay clock starts again (seed 003). */
  noteAccess(ids: string[]): void {
    const now = Math.floor(Date.now() / 1000);
    const st = this.db.prepare('UPDATE memories SET access_count = access_count + 1, last_accessed = ? WHERE id = ?');
    this.db.transaction(() => ids.forEach((id) => st.run(now, id)))();
  }

  /** Records that a conversation was consolidated (so the nightly job does not do it again). */
  markConsolidated(sessionId: string, scope: string): void {
    const now = Math.floor(Date.now() / 1000);
    this.db
      .prepare(
        'INSERT INTO sessions_consolidations (session_id, first_seen_at, consolidated_at, scope) VALUES (?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET consolidated_at = excluded.consolidated_at',
      )
      .run(sessionId, now, now, scope);
  }

  /** Live memories of a scope by kind, the newest event time, and how many entities they mention. */
  stats(scope: string, vectors: boolean): IndexStats {
    const rows = this.db
      .prepare('SELECT kind, COUNT(*) AS n, MAX(event_time) AS t FROM memories WHERE scope = ? AND valid_until IS NULL GROUP BY kind')
      .all(scope) as Array<{
      kind: string;
      n: number;
      t: number;
    }>;
    const latest = rows.reduce((m, r) => Math.max(m, r.t), 0);
    const entities = (
      this.db
        .prepare('SELECT COUNT(DISTINCT me.entity_id) AS n FROM memory_entities me JOIN memories m ON m.id = me.memory_id WHERE m.scope = ?')
        .get(scope) as { n: number }
    ).n;
    return { byKind: Object.fromEntries(rows.map((r) => [r.kind, r.n])), latest: latest ? new Date(latest * 1000).toISOString() : null, entities, vectors };
  }

  /**
   * About how many memories the file holds (the largest rowid: no scan). BM25's IDF counts
   * every memory of the file, so the relevance bar of # Relevant Memory is scaled by it.
   */
  memoryCount(): number {
    return (this.db.prepare('SELECT MAX(rowid) AS n FROM memories').get() as { n: number | null }).n ?? 0;
  }
}
