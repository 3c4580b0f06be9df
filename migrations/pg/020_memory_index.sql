-- The memory index (src/index/pg/, docs/postgres.md#the-memory-index): the rows are canonical
-- here; each process searches a local SQLite cache of them, kept current by the change feed.
--
-- memory_rows: every memory as memory.db's `memories` holds it, without what is derived from
-- the text (full text, entities). `pos` is the order rows were first stored: a cache is rebuilt
-- in that order, so its entities take the same first spelling as the writer's. Times are
-- seconds since the epoch, as in memory.db; source_ids, tags and attributes are its JSON text.
CREATE TABLE memory_rows (
  id text PRIMARY KEY,
  pos bigserial NOT NULL,
  scope text NOT NULL,
  kind text NOT NULL,
  content text NOT NULL,
  session_id text,
  event_time bigint NOT NULL,
  created_at bigint NOT NULL,
  valid_until bigint,
  confidence double precision NOT NULL,
  access_count integer NOT NULL DEFAULT 0,
  last_accessed bigint,
  decay_rate double precision NOT NULL,
  source_ids text NOT NULL,
  source_role text,
  tags text NOT NULL,
  attributes text NOT NULL,
  speaker text,
  source_message_id text,
  seq integer
);
CREATE INDEX memory_rows_pos ON memory_rows (pos);
CREATE INDEX memory_rows_scope ON memory_rows (scope);

-- A conversation's consolidation mark (memory.db's sessions_consolidations).
CREATE TABLE memory_sessions (
  session_id text PRIMARY KEY,
  scope text,
  first_seen_at bigint NOT NULL,
  consolidated_at bigint
);

-- The index's metadata set through MemoryIndex.setMeta (the embedding model and size).
CREATE TABLE memory_meta (
  key text PRIMARY KEY,
  value text NOT NULL
);

-- Each memory's embedding (float32 little-endian, as sqlite-vec stores it), so a rebuilt cache
-- does not compute it again.
CREATE TABLE memory_vectors (
  memory_id text PRIMARY KEY REFERENCES memory_rows (id) ON DELETE CASCADE,
  vector bytea NOT NULL
);

-- The change feed: one row per thing changed ('memory', 'session', 'meta', 'vector' and its
-- key), ids only, never text. Writers lock memory_feed's row before numbering their changes, so
-- seq values commit in order. `identity` tells a cache which database it mirrors; changes up to
-- `pruned_through` were deleted (a cache behind it is rebuilt).
CREATE TABLE memory_changes (
  seq bigserial PRIMARY KEY,
  kind text NOT NULL,
  key text NOT NULL,
  at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memory_changes_at ON memory_changes (at);

CREATE TABLE memory_feed (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  identity text NOT NULL DEFAULT gen_random_uuid()::text,
  pruned_through bigint NOT NULL DEFAULT 0
);
INSERT INTO memory_feed DEFAULT VALUES;
