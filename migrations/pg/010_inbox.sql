-- The intake journal (src/queue/inbox-pg.ts), as inbox.jsonl holds it in the embedded mode: one
-- row per accepted message, inserted (committed) before the message waits in its chat's queue,
-- closed (`done_at`) once it is handled. `seq` orders the entries as they were accepted.
--
-- msg: the message as the file's `in` line holds it (JSON text, receivedAt as ISO text) — text,
-- not jsonb, as jsonb refuses a \u0000 a message may hold and a refused accept is a lost message.
-- channel, chat_id: the message's chat, for /forget and purge. attempt: starts of handling.
-- call_tool, call_args: the tool call under way (its arguments' hash, never the arguments);
-- moved to `interrupted` when a later run starts the entry again, since the process died in it.
--
-- One row per entry, so that who handles an open entry can be added as columns of its own
-- (an owner and a lease, nullable) when several processes share the journal.
CREATE TABLE inbox (
  id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  channel text NOT NULL,
  chat_id text NOT NULL,
  msg text NOT NULL,
  attempt integer NOT NULL DEFAULT 0,
  interrupted jsonb NOT NULL DEFAULT '[]',
  call_tool text,
  call_args text,
  accepted_at timestamptz NOT NULL DEFAULT now(),
  done_at timestamptz
);
CREATE INDEX inbox_open ON inbox (seq) WHERE done_at IS NULL;
CREATE INDEX inbox_chat ON inbox (channel, chat_id);
CREATE INDEX inbox_closed ON inbox (done_at) WHERE done_at IS NOT NULL;
