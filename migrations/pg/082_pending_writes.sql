-- Memory writes held for the owner's approval (src/memory/pg/pending.ts), as
-- `memory-pending.json` holds them in files: one row per held call of a memory tool, its
-- record the same JSON text, kept exactly. Deleted when approved, rejected, forgotten, purged,
-- or once expired (`expires_at`, seven days after it was held).
CREATE TABLE pending_writes (
  id text PRIMARY KEY,
  scope text NOT NULL,
  channel text NOT NULL,
  chat_id text NOT NULL,
  held_at text NOT NULL,
  expires_at timestamptz NOT NULL,
  record text NOT NULL
);
CREATE INDEX pending_writes_scope ON pending_writes (scope, held_at, id);
