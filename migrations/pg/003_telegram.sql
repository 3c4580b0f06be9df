-- Telegram's state (src/channels/telegram/*-pg.ts).
--
-- telegram_updates: every update id taken, stored before the update is handled, so an update
-- is handled once by any number of processes (INSERT … ON CONFLICT DO NOTHING decides who takes
-- it). Ids older than 7 days are deleted: Telegram keeps an unconfirmed update 24 hours.
CREATE TABLE telegram_updates (
  update_id bigint PRIMARY KEY,
  taken_at timestamptz NOT NULL
);
CREATE INDEX telegram_updates_taken_at ON telegram_updates (taken_at);

-- telegram_pairing: the pairing record (codes, approved users and groups, the backlog), one
-- row changed under FOR UPDATE by the rules of pairing.ts, as pairing.json is under its lock.
-- Small and bounded: at most 3 pending codes, 100 waiting strangers, 200 told groups.
CREATE TABLE telegram_pairing (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  data jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO telegram_pairing (id, data)
  VALUES (true, '{"version": 1, "approved": [], "pending": [], "waiting": [], "groups": [], "told": []}');
