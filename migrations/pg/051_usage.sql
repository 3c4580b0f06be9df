-- Token counts (src/features/usage/pg-usage.ts), as usage.db holds them in the embedded mode:
-- one row per day × chat × kind, summed call by call (`INSERT … ON CONFLICT DO UPDATE`, so two
-- processes adding to one row lose none of each other's calls), and the same sums per model that
-- answered. Days are calendar dates (YYYY-MM-DD) in the configured TZ.
CREATE TABLE usage_daily (
  day text NOT NULL,
  chat text NOT NULL,
  kind text NOT NULL,
  calls bigint NOT NULL DEFAULT 0,
  prompt_tokens bigint NOT NULL DEFAULT 0,
  cached_tokens bigint NOT NULL DEFAULT 0,
  completion_tokens bigint NOT NULL DEFAULT 0,
  audio_seconds double precision NOT NULL DEFAULT 0,
  estimated_calls bigint NOT NULL DEFAULT 0,
  estimated_tokens bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (day, chat, kind)
);
CREATE INDEX usage_daily_chat_day ON usage_daily (chat, day);

CREATE TABLE usage_models (
  day text NOT NULL,
  chat text NOT NULL,
  kind text NOT NULL,
  model text NOT NULL,
  calls bigint NOT NULL DEFAULT 0,
  prompt_tokens bigint NOT NULL DEFAULT 0,
  cached_tokens bigint NOT NULL DEFAULT 0,
  completion_tokens bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (day, chat, kind, model)
);
CREATE INDEX usage_models_chat ON usage_models (chat);
