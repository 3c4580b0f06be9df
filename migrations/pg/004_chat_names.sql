-- The chats' names (src/sessions/names-pg.ts), as sessions.names.json holds them: one row per
-- chat (`channel:chatId`), its kind, the name people see (cleaned before it is stored) and, for a
-- forum topic, its group's key.
CREATE TABLE chat_names (
  chat text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('private', 'group', 'topic')),
  name text,
  parent text,
  updated_at timestamptz NOT NULL DEFAULT now()
);
