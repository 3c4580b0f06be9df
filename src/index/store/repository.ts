/**
 * Writes to the long-term memory index: episodes (every message), facts (with two-level
 * deduplication and conflict marking), reflections, entities and their links. No LLM and no
 * network here: the ingest path must stay within a few milliseconds (seed 003 hot path).
 */
import { randomBytes } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';
import { ScopedFtsWriter, rebuildScopedFts } from './fts.js';
import { extractEntities, type ExtractedEntity } from './entities.js';
import { tokenize } from './query.js';
import { scrubSecrets } from '../../core/log.js';

export type MemoryKind = 'episode' | 'fact' | 'reflection';

/** A memory as search and ranking read it. */
export interface MemoryRow {
  id: string;
  kind: MemoryKind;
  content: string;
  event_time: number;
  speaker: string | null;
  source_role: string | null;
  session_id: string | null;
  source_message_id: string | null;
  source_ids: string;
  confidence: number;
  seq: number | null;
}

/**
 * A memory as it is stored, every column but those derived from its text (full text, entities):
 * what PostgreSQL keeps of it and a cache writes back (src/index/pg/).
 */
export interface StoredMemory {
  id: string;
  kind: string;
  content: string;
  session_id: string | null;
  event_time: number;
  created_at: number;
  valid_until: number | null;
  confidence: number;
  access_count: number;
  last_accessed: number | null;
  decay_rate: number;
  source_ids: string;
  source_role: string | null;
  tags: string;
  attributes: string;
  scope: string;
  speaker: string | null;
  source_message_id: string | null;
  seq: number | null;
}

export interface EpisodeInput {
  content: string;
  role: 'user' | 'assistant';
  speaker?: string | undefined;
  sessionId: string;
  scope: string;
  eventTime: Date;
  sourceMessageId?: string | undefined;
}

export interface FactInput {
  content: string;
  scope: string;
  sessionId?: string | undefined;
  sourceIds?: string[];
  tags?: string[];
  confidence?: number;
  /** When the fact became known (an import keeps the original date); now when not given. */
  eventTime?: Date | undefined;
}

export interface SavedFact {
  id: string;
  content: string;
  /** Set when the fact was not saved because an equivalent active fact exists. */
  duplicateOf?: string;
  /** Older facts this one conflicts with (their confidence was lowered to 0.3). */
  supersedes?: string[];
}

/** Whether a message's episode row is there (by scope, source message id and role). */
export function hasEpisode(db: Db, scope: string, sourceMessageId: string, role: string): boolean {
  return (
    db
      .prepare("SELECT 1 FROM memories WHERE scope = ? AND source_message_id = ? AND kind = 'episode' AND source_role = ? LIMIT 1")
      .get(scope, sourceMessageId, role) !== undefined
  );
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

const sec = (d: Date | number) => Math.floor((typeof d === 'number' ? d : d.getTime()) / 1000);

/** Jaccard similarity of two texts' word sets. */
export function jaccard(a: string, b: string): number {
  const A = new Set(tokenize(a));
  const B = new Set(tokenize(b));
  if (A.size === 0 && B.size === 0) return 1;
  let inter = 0;
  for (const w of A) if (B.has(w)) inter++;
  return inter / (A.size + B.size - inter);
}

export const DEDUP_JACCARD = 0.75;

/**
 * Two facts conflict when they say something different about the same subject: they open with
 * the same words (at least three; all but the last one or two of the shorter) and then differ —
 * "The user's favourite coffee is latte" vs "… is flat white". Facts that merely share words
 * ("brother is called Tom" / "sister is called Dana") are not conflicts.
 */
export function conflicts(a: string, b: string): boolean {
  const A = tokenize(a);
  const B = tokenize(b);
  let p = 0;
  while (p < A.length && p < B.length && A[p] === B[p]) p++;
  const shorter = Math.min(A.length, B.length);
  // Only the last word or two may differ: the value, not the subject.
  return p >= Math.max(3, shorter - 2) && p < shorter;
}

export class IndexWriter {
  private readonly st: Record<string, Statement>;
  private readonly seqs = new Map<string, number>();
  private readonly fts: ScopedFtsWriter;

  constructor(private readonly db: Db) {
    this.fts = new ScopedFtsWriter(db);
    this.st = {
      insert: db.prepare(`INSERT INTO memories (id, kind, content, session_id, event_time, created_at, source_ids, source_role,
        tags, attributes, scope, speaker, source_message_id, seq, confidence, decay_rate)
        VALUES (@id, @kind, @content, @session_id, @event_time, @created_at, @source_ids, @source_role, @tags, @attributes,
        @scope, @speaker, @source_message_id, @seq, @confidence, @decay_rate)`),
      maxSeq: db.prepare('SELECT MAX(seq) AS s FROM memories WHERE session_id = ?'),
      aliasLookup: db.prepare('SELECT e.id FROM entity_aliases a JOIN entities e ON e.id = a.entity_id WHERE a.scope = ? AND a.alias = ? AND e.type = ?'),
      entityInsert: db.prepare('INSERT INTO entities (id, scope, canonical_name, type, aliases, mention_count) VALUES (?, ?, ?, ?, ?, 1)'),
      entityBump: db.prepare('UPDATE entities SET mention_count = mention_count + 1 WHERE id = ?'),
      entityAliases: db.prepare('SELECT aliases FROM entities WHERE id = ?'),
      entitySetAliases: db.prepare('UPDATE entities SET aliases = ? WHERE id = ?'),
      aliasInsert: db.prepare('INSERT OR IGNORE INTO entity_aliases (scope, alias, entity_id) VALUES (?, ?, ?)'),
      link: db.prepare('INSERT OR IGNORE INTO memory_entities (memory_id, entity_id, scope) VALUES (?, ?, ?)'),
      scopeOf: db.prepare('SELECT scope FROM memories WHERE id = ?'),
      setEntityIds: db.prepare('UPDATE memories SET entity_ids = ? WHERE id = ?'),
      restore: db.prepare(`INSERT INTO memories (id, kind, content, session_id, event_time, created_at, valid_until, confidence, access_count,
        last_accessed, decay_rate, source_ids, source_role, tags, attributes, scope, speaker, source_message_id, seq)
        VALUES (@id, @kind, @content, @session_id, @event_time, @created_at, @valid_until, @confidence, @access_count,
        @last_accessed, @decay_rate, @source_ids, @source_role, @tags, @attributes, @scope, @speaker, @source_message_id, @seq)`),
      activeFacts: db.prepare("SELECT id, content FROM memories WHERE kind = 'fact' AND scope = ? AND valid_until IS NULL"),
      lowerConfidence: db.prepare('UPDATE memories SET confidence = MIN(confidence, 0.3) WHERE id = ?'),
      ensureSession: db.prepare('INSERT OR IGNORE INTO sessions_consolidations (session_id, first_seen_at, scope) VALUES (?, ?, ?)'),
    };
  }

  private nextSeq(sessionId: string): number {
    let s = this.seqs.get(sessionId);
    if (s === undefined) s = (this.st.maxSeq!.get(sessionId) as { s: number | null }).s ?? 0;
    this.seqs.set(sessionId, ++s);
    return s;
  }

  /**
   * create_or_get by alias within one scope; bumps mention_count on every sighting. Entities
   * are per scope: a chat never sees another chat's spelling, aliases or count of a name.
   */
  createOrGetEntity(e: Pick<ExtractedEntity, 'text' | 'key' | 'type'>, scope: string): string {
    const found = this.st.aliasLookup!.get(scope, e.key, e.type) as { id: string } | undefined;
    if (found) {
      this.st.entityBump!.run(found.id);
      const aliases = JSON.parse((this.st.entityAliases!.get(found.id) as { aliases: string }).aliases) as string[];
      if (!aliases.includes(e.text)) {
        aliases.push(e.text);
        this.st.entitySetAliases!.run(JSON.stringify(aliases.slice(-20)), found.id);
      }
      return found.id;
    }
    const id = newId('ent');
    this.st.entityInsert!.run(id, scope, e.text, e.type, JSON.stringify([e.text]));
    this.st.aliasInsert!.run(scope, e.key, id);
    return id;
  }

  linkEntities(memoryId: string, content: string, scope?: string): string[] {
    const sc = scope ?? (this.st.scopeOf!.get(memoryId) as { scope: string } | undefined)?.scope;
    if (sc === undefined) return [];
    const ids = extractEntities(content).map((e) => this.createOrGetEntity(e, sc));
    for (const id of ids) this.st.link!.run(memoryId, id, sc);
    if (ids.length > 0) this.st.setEntityIds!.run(JSON.stringify(ids), memoryId);
    return ids;
  }

  private insert(row: {
    id: string;
    kind: MemoryKind;
    content: string;
    sessionId?: string | undefined;
    eventTime: number;
    scope: string;
    speaker?: string | undefined;
    role?: string | undefined;
    sourceMessageId?: string | undefined;
    sourceIds?: string[] | undefined;
    tags?: string[] | undefined;
    attributes?: Record<string, unknown> | undefined;
    confidence?: number | undefined;
    decayRate?: number | undefined;
  }): void {
    // Index rows reach the chat (search_memory, # Relevant Memory): no secret goes in.
    const content = scrubSecrets(row.content);
    const { lastInsertRowid } = this.st.insert!.run({
      id: row.id,
      kind: row.kind,
      content,
      session_id: row.sessionId ?? null,
      event_time: row.eventTime,
      created_at: sec(Date.now()),
      source_ids: JSON.stringify(row.sourceIds ?? []),
      source_role: row.role ?? null,
      tags: JSON.stringify(row.tags ?? []),
      attributes: JSON.stringify(row.attributes ?? {}),
      scope: row.scope,
      speaker: row.speaker ?? null,
      source_message_id: row.sourceMessageId ?? null,
      seq: row.kind === 'episode' && row.sessionId ? this.nextSeq(row.sessionId) : null,
      confidence: row.confidence ?? 1,
      decay_rate: row.decayRate ?? (row.kind === 'fact' ? 0.1 : 0),
    });
    this.fts.add(lastInsertRowid, row.scope, content);
    this.linkEntities(row.id, content, row.scope);
  }

  /**
   * A memory stored by another process, as it was stored (a cache of PostgreSQL's rows,
   * src/index/pg/): its words indexed and, while it is live, its entities linked — a retired
   * fact has no links, as correct_fact and decay leave it.
   */
  restore(row: StoredMemory): void {
    const { lastInsertRowid } = this.st.restore!.run(row);
    this.fts.add(lastInsertRowid, row.scope, row.content);
    if (row.valid_until === null) this.linkEntities(row.id, row.content, row.scope);
    const known = row.session_id === null ? undefined : this.seqs.get(row.session_id);
    if (known !== undefined && row.seq !== null && row.seq > known) this.seqs.set(row.session_id!, row.seq);
  }

  /** `alongside` runs inside the same transaction (the search's record of speakers). */
  saveEpisode(e: EpisodeInput, alongside?: () => void): string {
    const id = newId('ep');
    this.db.transaction(() => {
      alongside?.();
      this.st.ensureSession!.run(e.sessionId, sec(e.eventTime), e.scope);
      this.insert({
        id,
        kind: 'episode',
        content: e.content,
        sessionId: e.sessionId,
        eventTime: sec(e.eventTime),
        scope: e.scope,
        speaker: e.speaker,
        role: e.role,
        sourceMessageId: e.sourceMessageId,
      });
    })();
    return id;
  }

  /**
   * Saves facts with two-level deduplication: exact (normalized) within the batch, then
   * Jaccard ≥ 0.75 against active facts of the scope. A new fact that overlaps an older one
   * without duplicating it is a conflict: the older fact's confidence drops to 0.3 and the new
   * one records `supersedes`.
   */
  saveFacts(facts: FactInput[]): SavedFact[] {
    const out: SavedFact[] = [];
    this.db.transaction(() => {
      const batchSeen = new Set<string>();
      for (const f of facts) {
        const content = f.content.trim();
        if (!content) continue;
        const norm = tokenize(content).join(' ');
        if (batchSeen.has(norm)) continue;
        batchSeen.add(norm);
        const active = this.st.activeFacts!.all(f.scope) as Array<{ id: string; content: string }>;
        let dup: string | undefined;
        const conflicting: string[] = [];
        for (const a of active) {
          const j = jaccard(content, a.content);
          if (j >= DEDUP_JACCARD) {
            dup = a.id;
            break;
          }
          if (conflicts(content, a.content)) conflicting.push(a.id);
        }
        if (dup) {
          out.push({ id: dup, content, duplicateOf: dup });
          continue;
        }
        const id = newId('fact');
        for (const c of conflicting) this.st.lowerConfidence!.run(c);
        this.insert({
          id,
          kind: 'fact',
          content,
          sessionId: f.sessionId,
          eventTime: sec(f.eventTime ?? Date.now()),
          scope: f.scope,
          sourceIds: f.sourceIds,
          tags: f.tags,
          confidence: f.confidence,
          attributes: conflicting.length ? { supersedes: conflicting } : {},
        });
        out.push({ id, content, ...(conflicting.length ? { supersedes: conflicting } : {}) });
      }
    })();
    return out;
  }

  saveReflection(content: string, scope: string, sourceIds: string[]): string {
    const id = newId('ref');
    this.insert({ id, kind: 'reflection', content, eventTime: sec(Date.now()), scope, sourceIds, tags: ['weekly'], decayRate: 0 });
    return id;
  }
}

/**
 * Rebuilds everything derived from the memories' text (`npm run memory -- reindex`): both
 * full-text tables and every entity with its links. Returns the live memories (for
 * re-embedding) and how many entity links were made.
 */
export function rebuildDerived(db: Db): { memories: Array<{ id: string; content: string }>; links: number } {
  db.exec("INSERT INTO memories_fts(memories_fts) VALUES('rebuild')");
  rebuildScopedFts(db);
  const memories = db.prepare('SELECT id, content FROM memories WHERE valid_until IS NULL').all() as Array<{ id: string; content: string }>;
  let links = 0;
  const writer = new IndexWriter(db);
  db.transaction(() => {
    // Entities are rebuilt from the text, so their per-chat counts are not counted twice.
    db.exec('DELETE FROM memory_entities; DELETE FROM entity_aliases; DELETE FROM entities');
    for (const r of memories) links += writer.linkEntities(r.id, r.content).length;
  })();
  return { memories, links };
}
