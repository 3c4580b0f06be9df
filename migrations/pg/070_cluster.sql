-- Several processes, one bot (src/cluster/, docs/cluster.md). Every time here is the database's
-- clock (now()): processes on several machines never compare their own clocks.
--
-- cluster_processes: one row per running process, its heartbeat renewed every third of
-- CLUSTER_LEASE_MS. Alive = a heartbeat within the lease time. A clean stop deletes its row; a
-- killed process's row stays until it is a day old (then the next start deletes it).
CREATE TABLE cluster_processes (
  id text PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  version text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now()
);

-- cluster_leases: a named lease (Telegram polling, each nightly job), held by one process until
-- `expires_at`, renewed while it is held. A release ends it (`expires_at` = now()) and keeps the
-- row: `taken_at` says when it was last taken (a nightly job runs once within its period).
-- `token` grows at each change of holder (a fencing number: who held it after whom).
CREATE TABLE cluster_leases (
  name text PRIMARY KEY,
  holder text NOT NULL,
  token bigint NOT NULL DEFAULT 1,
  taken_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);

-- inbox_claims: which process runs a chat's open journal entries (src/cluster/claims.ts). One
-- row per chat being handled: a chat without one has nobody on it, and its open entries are free
-- to claim. `through`: the last entry (inbox.seq) the holder has taken; entries after it wait
-- for it (it takes them before it lets go). A claim whose `expires_at` passed belongs to a
-- process that died: another takes it, and every open entry of the chat with it.
CREATE TABLE inbox_claims (
  channel text NOT NULL,
  chat_id text NOT NULL,
  owner text NOT NULL,
  through bigint NOT NULL DEFAULT 0,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (channel, chat_id)
);
CREATE INDEX inbox_claims_owner ON inbox_claims (owner);
