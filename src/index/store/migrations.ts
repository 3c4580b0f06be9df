/**
 * The schema of `memory.db` as numbered migrations, and the runner that applies the ones a file
 * lacks (its version is recorded in `memory_metadata`). In a module of its own so that opening
 * the file (db.ts) and the per-chat full-text index that migration v3 builds (fts.ts) do not
 * import each other.
 */
import type Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { SCOPED_FTS, rebuildScopedFts } from './fts.js';
import { AppError } from '../../core/errors.js';

type Db = Database.Database;

/** Migrations in order; migration i brings the schema from version i to i + 1. */
export const MIGRATIONS: Array<string | ((db: Db) => void)> = [
  `
  CREATE TABLE IF NOT EXISTS memory_metadata (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS memories (
    id            TEXT PRIMARY KEY,
    kind          TEXT NOT NULL,
    content       TEXT NOT NULL,
    session_id    TEXT,
    embedding     BLOB,
    event_time    INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    valid_until   INTEGER,
    confidence    REAL DEFAULT 1.0,
    access_count  INTEGER DEFAULT 0,
    last_accessed INTEGER,
    decay_rate    REAL DEFAULT 0.1,
    source_ids    TEXT DEFAULT '[]',
    source_role   VARCHAR(255),
    entity_ids    TEXT DEFAULT '[]',
    tags          TEXT DEFAULT '[]',
    attributes    TEXT DEFAULT '{}',
    -- ours: isolation scope (channel:chat or "global"), display name, channel message id
    scope         TEXT NOT NULL DEFAULT 'global',
    speaker       TEXT,
    source_message_id TEXT,
    seq           INTEGER
  );
  CREATE INDEX IF NOT EXISTS idx_mem_scope_kind ON memories(scope, kind, valid_until);
  CREATE INDEX IF NOT EXISTS idx_mem_session ON memories(session_id, seq);
  CREATE INDEX IF NOT EXISTS idx_mem_scope_time ON memories(scope, event_time);

  CREATE TABLE IF NOT EXISTS entities (
    id             TEXT PRIMARY KEY,
    canonical_name TEXT NOT NULL,
    type           TEXT NOT NULL,
    aliases        TEXT DEFAULT '[]',
    summary        TEXT,
    embedding      BLOB,
    mention_count  INTEGER DEFAULT 1,
    protected      INTEGER DEFAULT 0
  );
  CREATE UNIQUE INDEX IF NOT EXISTS idx_entities_name ON entities(canonical_name, type);
  CREATE TABLE IF NOT EXISTS entity_aliases (
    alias     TEXT NOT NULL,
    entity_id TEXT NOT NULL REFERENCES entities(id),
    PRIMARY KEY (alias, entity_id)
  );

  CREATE TABLE IF NOT EXISTS memory_entities (
    memory_id TEXT NOT NULL REFERENCES memories(id),
    entity_id TEXT NOT NULL REFERENCES entities(id),
    PRIMARY KEY (memory_id, entity_id)
  );
  CREATE INDEX IF NOT EXISTS idx_me_entity ON memory_entities(entity_id);
  CREATE INDEX IF NOT EXISTS idx_me_memory ON memory_entities(memory_id);

  CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    content, content='memories', content_rowid=rowid, tokenize='unicode61'
  );
  -- A second, stemmed view of the same text: "adopted" finds "adopt", "runs" finds "running".
  CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts_stem USING fts5(
    content, content='memories', content_rowid=rowid, tokenize='porter unicode61'
  );
  CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
    INSERT INTO memories_fts_stem(rowid, content) VALUES (new.rowid, new.content);
  END;
  CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    INSERT INTO memories_fts_stem(memories_fts_stem, rowid, content) VALUES ('delete', old.rowid, old.content);
  END;
  CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    INSERT INTO memories_fts_stem(memories_fts_stem, rowid, content) VALUES ('delete', old.rowid, old.content);
    INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
    INSERT INTO memories_fts_stem(rowid, content) VALUES (new.rowid, new.content);
  END;

  CREATE TABLE IF NOT EXISTS sessions_consolidations (
    session_id       TEXT PRIMARY KEY,
    first_seen_at    INTEGER NOT NULL,
    consolidated_at  INTEGER,
    scope            TEXT
  );
  CREATE TABLE IF NOT EXISTS embedding_cache (
    hash      TEXT NOT NULL,
    model     TEXT NOT NULL,
    dims      INTEGER NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (hash, model, dims)
  );
  CREATE TABLE IF NOT EXISTS job_runs (
    job         TEXT NOT NULL,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    outcome     TEXT,
    detail      TEXT
  );
  `,
  // v2: searches are always inside one scope, so the stemmed FTS table carries a per-scope
  // token (FTS5 intersects its short posting list with the query words instead of ranking
  // every chat's matches), and entity links carry the scope for an indexed lookup.
  `
  ALTER TABLE memories ADD COLUMN scope_tok TEXT;
  UPDATE memories SET scope_tok = 'sc' || lower(hex(scope));
  DROP TRIGGER IF EXISTS memories_ai;
  DROP TRIGGER IF EXISTS memories_ad;
  DROP TRIGGER IF EXISTS memories_au;
  DROP TABLE IF EXISTS memories_fts_stem;
  CREATE VIRTUAL TABLE memories_fts_stem USING fts5(
    content, scope_tok, content='memories', content_rowid=rowid, tokenize='porter unicode61'
  );
  INSERT INTO memories_fts_stem(memories_fts_stem) VALUES ('rebuild');
  CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
    INSERT INTO memories_fts_stem(rowid, content, scope_tok) VALUES (new.rowid, new.content, new.scope_tok);
  END;
  CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    INSERT INTO memories_fts_stem(memories_fts_stem, rowid, content, scope_tok) VALUES ('delete', old.rowid, old.content, old.scope_tok);
  END;
  CREATE TRIGGER memories_au AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    INSERT INTO memories_fts_stem(memories_fts_stem, rowid, content, scope_tok) VALUES ('delete', old.rowid, old.content, old.scope_tok);
    INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
    INSERT INTO memories_fts_stem(rowid, content, scope_tok) VALUES (new.rowid, new.content, new.scope_tok);
  END;
  ALTER TABLE memory_entities ADD COLUMN scope TEXT;
  UPDATE memory_entities SET scope = (SELECT scope FROM memories WHERE memories.id = memory_entities.memory_id);
  CREATE INDEX IF NOT EXISTS idx_me_scope_entity ON memory_entities(scope, entity_id);
  `,
  // v3: one scope token per document was still slow at 1M memories (FTS5 walked every chat's
  // postings of a common word). Words are now indexed per scope (see fts.ts), in a contentless
  // table filled from JS; the v2 stemmed table and its scope token go.
  (db) => {
    db.exec(`
      DROP TRIGGER IF EXISTS memories_ai;
      DROP TRIGGER IF EXISTS memories_ad;
      DROP TRIGGER IF EXISTS memories_au;
      DROP TABLE IF EXISTS memories_fts_stem;
      ALTER TABLE memories DROP COLUMN scope_tok;
      CREATE TABLE fts_scopes (code INTEGER PRIMARY KEY, scope TEXT NOT NULL UNIQUE);
      CREATE VIRTUAL TABLE ${SCOPED_FTS} USING fts5(
        words, content='', contentless_delete=1, tokenize='porter unicode61'
      );
      CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
      END;
      CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
        DELETE FROM ${SCOPED_FTS} WHERE rowid = old.rowid;
      END;
      -- The daemon never rewrites a memory's text; if something else does, its old words must
      -- not keep matching (\`npm run memory -- reindex\` indexes the new ones).
      CREATE TRIGGER memories_au AFTER UPDATE OF content ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
        INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
        DELETE FROM ${SCOPED_FTS} WHERE rowid = old.rowid;
      END;
    `);
    rebuildScopedFts(db);
  },
  // v4: entities per scope. They were global, so get_entity_info in one chat showed another
  // chat's spelling of a name or link, its aliases and a mention count over every chat. Each
  // (entity, scope) pair of the links becomes an entity of that scope; its names are the old
  // spellings that occur in that scope's own memories (else the lower-case key that scope's
  // text matched), its count that scope's links. Self-contained: no code outside this entry.
  (db) => {
    db.exec(`
      CREATE TABLE entities_v4 (
        id TEXT PRIMARY KEY, scope TEXT NOT NULL, canonical_name TEXT NOT NULL, type TEXT NOT NULL,
        aliases TEXT DEFAULT '[]', summary TEXT, embedding BLOB, mention_count INTEGER DEFAULT 1, protected INTEGER DEFAULT 0
      );
      CREATE TABLE entity_aliases_v4 (
        scope TEXT NOT NULL, alias TEXT NOT NULL, entity_id TEXT NOT NULL,
        PRIMARY KEY (scope, alias, entity_id)
      );
    `);
    const pairs = db.prepare('SELECT entity_id, scope, COUNT(*) AS n FROM memory_entities WHERE scope IS NOT NULL GROUP BY entity_id, scope').all() as Array<{
      entity_id: string;
      scope: string;
      n: number;
    }>;
    const entity = db.prepare('SELECT type, aliases, protected FROM entities WHERE id = ?');
    const key = db.prepare('SELECT alias FROM entity_aliases WHERE entity_id = ? LIMIT 1');
    const occurs = db.prepare(
      'SELECT 1 FROM memory_entities me JOIN memories m ON m.id = me.memory_id WHERE me.entity_id = ? AND me.scope = ? AND instr(m.content, ?) > 0 LIMIT 1',
    );
    const insert = db.prepare('INSERT INTO entities_v4 (id, scope, canonical_name, type, aliases, mention_count, protected) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const insertAlias = db.prepare('INSERT OR IGNORE INTO entity_aliases_v4 (scope, alias, entity_id) VALUES (?, ?, ?)');
    const relink = db.prepare('UPDATE memory_entities SET entity_id = ? WHERE entity_id = ? AND scope = ?');
    for (const p of pairs) {
      const e = entity.get(p.entity_id) as { type: string; aliases: string | null; protected: number | null } | undefined;
      const k = (key.get(p.entity_id) as { alias: string } | undefined)?.alias;
      if (!e || k === undefined) continue;
      let old: unknown = [];
      try {
        old = JSON.parse(e.aliases ?? '[]');
      } catch {
        /* unreadable list: the key stands in */
      }
      const forms = (Array.isArray(old) ? old : []).filter(
        (f): f is string => typeof f === 'string' && f !== '' && occurs.get(p.entity_id, p.scope, f) !== undefined,
      );
      const names = forms.length > 0 ? forms : [k];
      const id = `ent_${randomBytes(8).toString('hex')}`;
      insert.run(id, p.scope, names[0], e.type, JSON.stringify(names), p.n, e.protected ?? 0);
      insertAlias.run(p.scope, k, id);
      relink.run(id, p.entity_id, p.scope);
    }
    db.exec(`
      DELETE FROM memory_entities WHERE scope IS NULL;
      DROP TABLE entity_aliases;
      DROP TABLE entities;
      ALTER TABLE entities_v4 RENAME TO entities;
      ALTER TABLE entity_aliases_v4 RENAME TO entity_aliases;
      CREATE UNIQUE INDEX idx_entities_name ON entities(scope, canonical_name, type);
      UPDATE memories SET entity_ids = COALESCE((SELECT json_group_array(me.entity_id) FROM memory_entities me WHERE me.memory_id = memories.id), '[]')
        WHERE entity_ids IS NOT NULL AND entity_ids != '[]';
    `);
  },
  // v5: who speaks in each chat, so search can tell which of them a question names without
  // reading the chat's messages (src/index/search/speakers.ts). Filled for the messages already there.
  `
  CREATE TABLE IF NOT EXISTS scope_speakers (
    scope   TEXT NOT NULL,
    speaker TEXT NOT NULL,
    PRIMARY KEY (scope, speaker)
  ) WITHOUT ROWID;
  INSERT OR IGNORE INTO scope_speakers (scope, speaker)
    SELECT DISTINCT scope, speaker FROM memories WHERE kind = 'episode' AND speaker IS NOT NULL;
  `,
  // v6: a message's rows by its source id, so the start after a crash can tell in one lookup
  // whether an exchange of the session log is indexed (src/index/ingest.ts, ingestOnce).
  `CREATE INDEX IF NOT EXISTS idx_mem_source ON memories(scope, source_message_id);`,
];

/** The schema version this program writes: one per migration. */
export const SCHEMA_VERSION = MIGRATIONS.length;
export function getMeta(db: Db, key: string): string | undefined {
  const row = db.prepare('SELECT value FROM memory_metadata WHERE key = ?').get(key) as { value: string } | undefined;
  return row?.value;
}

export function setMeta(db: Db, key: string, value: string): void {
  db.prepare('INSERT INTO memory_metadata(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, value);
}

/** Applies every migration newer than the file's recorded version, each in a transaction. */
export function migrate(db: Db): void {
  db.exec('CREATE TABLE IF NOT EXISTS memory_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
  const current = Number(getMeta(db, 'schema_version') ?? '0');
  if (current > MIGRATIONS.length) {
    throw new AppError('index.newer_schema', { found: current, supported: MIGRATIONS.length });
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      const step = MIGRATIONS[v]!;
      if (typeof step === 'string') db.exec(step);
      else step(db);
      setMeta(db, 'schema_version', String(v + 1));
    })();
  }
}
