-- The sessions (src/sessions/pg-store.ts), as sessions/*.json and sessions.wal.jsonl hold them in
-- the embedded mode.
--
-- sessions: one row per chat (`channel:chatId`). A session is kept in one of two forms: `text`,
-- the session file's bytes exactly as a move from files brought them (read and checked like a
-- file when the chat is first asked for), or `head` — the session's JSON without its messages'
-- contents (`messages` is []) — with its messages as rows of session_messages. The first change
-- to a session in text form writes it as head and rows, in one transaction. wal_seq: the newest
-- line of the session log the session holds (the file's `walSeq`).
CREATE TABLE sessions (
  chat text PRIMARY KEY,
  channel text NOT NULL,
  chat_id text NOT NULL,
  head text,
  text bytea,
  wal_seq bigint,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((head IS NULL) <> (text IS NULL))
);

-- A session's messages in order (pos 0, 1, …), each the JSON text of one message: a turn inserts
-- its new messages; only a compaction, /forget or /new rewrites a chat's rows.
CREATE TABLE session_messages (
  chat text NOT NULL,
  pos integer NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (chat, pos)
);

-- The session log: one row per line, the line's JSON text exactly as the file's line would be.
-- seq comes from a sequence, so it only grows, across processes; run names the process that
-- wrote the line ('moved' for lines a move from files brought), so a process forgets only its
-- own lines and those it read at its start.
CREATE SEQUENCE session_log_seq;
CREATE TABLE session_log (
  seq bigint PRIMARY KEY,
  channel text NOT NULL,
  chat_id text NOT NULL,
  run text NOT NULL,
  line text NOT NULL
);
CREATE INDEX session_log_chat ON session_log (channel, chat_id);
CREATE INDEX session_log_run ON session_log (run);

-- A session that could not be read, set aside (the file's `*.corrupt-<time>`): its bytes and when.
CREATE TABLE session_aside (
  chat text NOT NULL,
  channel text NOT NULL,
  chat_id text NOT NULL,
  at text NOT NULL,
  text bytea NOT NULL,
  PRIMARY KEY (chat, at)
);
