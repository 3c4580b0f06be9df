-- Small values a process keeps across starts that are no store's rows, each a file of the
-- workspace in embedded mode (src/storage/kept.ts): the memory page's token
-- (`.memory-page-token`) and the Telegram channel's open placeholders
-- (`telegram/placeholders.json`). One row per value, its text kept exactly.
CREATE TABLE kept_values (
  name text PRIMARY KEY,
  value text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
