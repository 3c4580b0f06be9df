-- The memory files (src/memory/pg/), as the memory folder holds them in the embedded mode: per
-- scope (`channel:chatId`, or 'global' with MEMORY_SCOPE=global) MEMORY.md, the daily notes
-- (YYYY-MM-DD.md), HISTORY.md and HISTORY-YYYY-MM.md, and the versions of MEMORY.md.
--
-- Texts are bytea, the UTF-8 bytes as the file holds them: text refuses a NUL byte a note line
-- may hold, and nothing is trimmed or normalised, so a move files → PostgreSQL → files gives
-- the same bytes.
--
-- memory_files: one row per file; `name` is its name in the scope's folder, as resolved there
-- (a name that leads out of it never reaches the table). A change of a file is a transaction
-- that holds its row (FOR UPDATE) and writes the whole text here. `open`: the text does not end
-- with a newline (an append puts one first).
CREATE TABLE memory_files (
  scope text NOT NULL,
  name text NOT NULL,
  body bytea NOT NULL,
  open boolean GENERATED ALWAYS AS (length(body) > 0 AND get_byte(body, length(body) - 1) <> 10) STORED,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, name)
);

-- memory_appends: the lines appended to a file (a daily note) since its text was last written
-- whole, one row each (with its newline), in the order of `seq`: an append inserts one small
-- row, where growing the file's row would store the whole note again with every line. Appends
-- hold the file's row FOR SHARE (several at once), a change FOR UPDATE, which then writes the
-- whole text to memory_files and deletes these rows.
CREATE TABLE memory_appends (
  scope text NOT NULL,
  name text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  body bytea NOT NULL,
  at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, name, seq)
);

-- A file's text as read: its row's text, then its appended lines.
CREATE VIEW memory_texts AS
  SELECT f.scope, f.name, f.body || coalesce(a.tail, ''::bytea) AS body, greatest(f.updated_at, a.at) AS updated_at
  FROM memory_files f
  LEFT JOIN LATERAL (
    SELECT string_agg(x.body, ''::bytea ORDER BY x.seq) AS tail, max(x.at) AS at
    FROM memory_appends x WHERE x.scope = f.scope AND x.name = f.name
  ) a ON true;

-- memory_versions: the versions of a scope's MEMORY.md (versions/{n}.md and their entry in
-- versions/index.json). `at` is the ISO text the entry holds; body NULL: the entry is listed
-- but its text is not kept (a file that was missing when the memory moved in).
CREATE TABLE memory_versions (
  scope text NOT NULL,
  n integer NOT NULL,
  at text NOT NULL,
  source text NOT NULL,
  added integer NOT NULL,
  removed integer NOT NULL,
  bytes integer NOT NULL,
  undoes integer,
  body bytea,
  PRIMARY KEY (scope, n)
);

-- memory_version_log: per scope the number the next version gets and the rewrite guard's
-- refusals (the rest of versions/index.json); `refused_last` is the last refusal's JSON text.
-- Its row is held (FOR UPDATE) while a version is recorded or the versions are redacted.
CREATE TABLE memory_version_log (
  scope text PRIMARY KEY,
  next integer NOT NULL DEFAULT 1,
  refused_count integer NOT NULL DEFAULT 0,
  refused_last text,
  updated_at timestamptz NOT NULL DEFAULT now()
);
