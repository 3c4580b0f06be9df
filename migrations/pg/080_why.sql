-- What each of a chat's last answers was built from, for /why (src/features/why/store-pg.ts):
-- one row per answer, the record as JSON text (kept exactly), the newest 20 of a chat kept.
-- `seq` orders a chat's answers; a /forget rewrites the rows whose items held the words.
CREATE TABLE why_records (
  seq bigserial PRIMARY KEY,
  chat text NOT NULL,
  turn text NOT NULL,
  body text NOT NULL,
  UNIQUE (chat, turn)
);
CREATE INDEX why_records_chat ON why_records (chat, seq);
