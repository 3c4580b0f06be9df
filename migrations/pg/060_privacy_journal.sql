-- The forgets and purges under way (src/features/privacy/journal-pg.ts), as `forgetting/` and
-- `purging/` hold them in files: one row per change, written before anything is removed,
-- rewritten when a start takes it up again (a forget's then without its words), deleted once
-- the change is done. `record` is the record's JSON text, kept exactly as written.
CREATE TABLE privacy_journal (
  kind text NOT NULL CHECK (kind IN ('forgetting', 'purging')),
  id text NOT NULL,
  record text NOT NULL,
  PRIMARY KEY (kind, id)
);
