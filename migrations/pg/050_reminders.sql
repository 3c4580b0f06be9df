-- Reminders (src/features/reminders/pg-store.ts), as schedules.db holds them in the embedded
-- mode: what is scheduled per chat (status pending → done | cancelled; a repeating one stays
-- pending and its due_at moves on), and one row per occurrence being or having been delivered.
-- An occurrence is claimed once only, whichever process asks: the claim's conditional UPDATE
-- (status pending, due_at the occurrence's) takes the reminder's row, and the deliveries'
-- primary key (reminder, due time) holds one record per occurrence. Times are epoch milliseconds.
CREATE TABLE reminders (
  id bigserial PRIMARY KEY,
  chat text NOT NULL,
  channel text NOT NULL,
  chat_id text NOT NULL,
  text text NOT NULL,
  due_at bigint NOT NULL,
  repeat text,
  timezone text NOT NULL,
  created_at bigint NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'cancelled'))
);
CREATE INDEX reminders_due ON reminders (status, due_at);
CREATE INDEX reminders_chat ON reminders (chat, status);

CREATE TABLE reminder_deliveries (
  reminder_id bigint NOT NULL,
  due_at bigint NOT NULL,
  chat text NOT NULL,
  channel text NOT NULL,
  chat_id text NOT NULL,
  text text NOT NULL,
  repeat text,
  state text NOT NULL CHECK (state IN ('claimed', 'sent', 'failed')),
  claimed_at bigint NOT NULL,
  sent_at bigint,
  PRIMARY KEY (reminder_id, due_at)
);
CREATE INDEX reminder_deliveries_state ON reminder_deliveries (state);
CREATE INDEX reminder_deliveries_chat ON reminder_deliveries (chat);
