/**
 * The queries of the nightly upkeep (src/index/upkeep/upkeep.ts): its run log (`job_runs`), the
 * sessions waiting for consolidation, fact decay and the facts a weekly reflection reads.
 * These throw on failure: Upkeep records a failed run itself instead of skipping silently.
 */
import type Database from 'better-sqlite3';

type Db = Database.Database;

const DAY = 86_400;

export interface DecayOutcome {
  checked: number;
  updated: number;
  deleted: number;
}

export class JobTables {
  constructor(
    private readonly db: Db,
    private readonly vectorsOn: () => boolean,
  ) {}

  /** Records that a job started; returns the run's id for `finishRun`. */
  startRun(job: string, atSec: number): number | bigint {
    return this.db.prepare('INSERT INTO job_runs (job, started_at) VALUES (?, ?)').run(job, atSec).lastInsertRowid;
  }

  finishRun(run: number | bigint, atSec: number, outcome: string, detail: string): void {
    this.db.prepare('UPDATE job_runs SET finished_at = ?, outcome = ?, detail = ? WHERE rowid = ?').run(atSec, outcome, detail, run);
  }

  /** Sessions not consolidated yet and not the newest of their scope (the user has left them). */
  pendingConsolidations(): Array<{ session_id: string; scope: string }> {
    return this.db
      .prepare(
        `SELECT s.session_id, s.scope FROM sessions_consolidations s
         WHERE s.consolidated_at IS NULL AND s.first_seen_at < (
           SELECT MAX(t.first_seen_at) FROM sessions_consolidations t WHERE t.scope IS s.scope)`,
      )
      .all() as Array<{ session_id: string; scope: string }>;
  }

  /** The live episodes of a session, in order. */
  sessionEpisodes(sessionId: string): Array<{ id: string; content: string; source_role: string }> {
    return this.db
      .prepare("SELECT id, content, source_role FROM memories WHERE session_id = ? AND kind = 'episode' AND valid_until IS NULL ORDER BY seq")
      .all(sessionId) as Array<{ id: string; content: string; source_role: string }>;
  }

  setConsolidated(sessionId: string, atSec: number): void {
    this.db.prepare('UPDATE sessions_consolidations SET consolidated_at = ? WHERE session_id = ?').run(atSec, sessionId);
  }

  /**
   * Ebbinghaus decay of every live fact at `nowSec`: confidence = base × e^(−rate × days since
   * access); below `threshold` the fact is soft-deleted with its entity links and vector.
   */
  decay(nowSec: number, threshold: number): DecayOutcome {
    const db = this.db;
    const facts = db
      .prepare(
        "SELECT id, confidence, decay_rate, created_at, last_accessed, attributes FROM memories WHERE kind = 'fact' AND valid_until IS NULL AND decay_rate > 0",
      )
      .all() as Array<{ id: string; confidence: number; decay_rate: number; created_at: number; last_accessed: number | null; attributes: string }>;
    let updated = 0;
    let deleted = 0;
    const upd = db.prepare('UPDATE memories SET confidence = ?, attributes = ? WHERE id = ?');
    const del = db.prepare('UPDATE memories SET valid_until = ? WHERE id = ?');
    const unlink = db.prepare('DELETE FROM memory_entities WHERE memory_id = ?');
    const unvec = this.vectorsOn() ? db.prepare('DELETE FROM vec_memories WHERE memory_id = ?') : null;
    db.transaction(() => {
      for (const f of facts) {
        const attrs = JSON.parse(f.attributes || '{}') as Record<string, unknown>;
        // Decay is computed from a stored base, not from the last result: running the job
        // twice in a row gives the same confidence, not a double decay.
        const base = typeof attrs.base_confidence === 'number' ? attrs.base_confidence : f.confidence;
        const days = Math.max(0, (nowSec - (f.last_accessed ?? f.created_at)) / DAY);
        const conf = base * Math.exp(-f.decay_rate * days);
        if (conf < threshold) {
          del.run(nowSec, f.id);
          unlink.run(f.id);
          unvec?.run(f.id);
          deleted++;
        } else if (Math.abs(conf - f.confidence) > 1e-4 || attrs.base_confidence !== base) {
          upd.run(conf, JSON.stringify({ ...attrs, base_confidence: base }), f.id);
          updated++;
        }
      }
    })();
    return { checked: facts.length, updated, deleted };
  }

  /** Scopes with a live fact created since `sinceSec`. */
  scopesWithFactsSince(sinceSec: number): string[] {
    return (
      this.db.prepare("SELECT DISTINCT scope FROM memories WHERE kind = 'fact' AND valid_until IS NULL AND created_at >= ?").all(sinceSec) as Array<{
        scope: string;
      }>
    ).map((r) => r.scope);
  }

  /** When the scope's newest reflection was written (seconds), or null. */
  lastReflectionAt(scope: string): number | null {
    return (this.db.prepare("SELECT MAX(created_at) AS t FROM memories WHERE kind = 'reflection' AND scope = ?").get(scope) as { t: number | null }).t;
  }

  /** The scope's live facts created since `sinceSec`, newest first (at most 200). */
  factsSince(scope: string, sinceSec: number): Array<{ id: string; content: string }> {
    return this.db
      .prepare(
        "SELECT id, content FROM memories WHERE kind = 'fact' AND scope = ? AND valid_until IS NULL AND created_at >= ? ORDER BY created_at DESC LIMIT 200",
      )
      .all(scope, sinceSec) as Array<{ id: string; content: string }>;
  }
}
