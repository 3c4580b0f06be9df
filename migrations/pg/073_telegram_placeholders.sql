-- The Telegram channel's placeholders of answers being streamed (STREAMING=edit), one row each,
-- named by the process that shows it (src/channels/telegram/placeholders-pg.ts). Several
-- processes serve one bot (docs/cluster.md): each writes only its own rows, and a process
-- running a message again takes over the placeholder only of a process no longer alive
-- (cluster_processes), so it finishes that half answer in place instead of sending a second.
-- Before, the placeholders were one list per bot (kept_values 'telegram-placeholders'), which
-- every process wrote whole: it moves here, owned by nobody alive.
CREATE TABLE telegram_placeholders (
  chat text NOT NULL,
  source text NOT NULL,
  owner text NOT NULL,
  tg_chat text NOT NULL,
  message_id bigint NOT NULL,
  thread_id bigint,
  finishing boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chat, source)
);

INSERT INTO telegram_placeholders (chat, source, owner, tg_chat, message_id, thread_id, finishing)
SELECT p->>'chat', p->>'source', 'moved', p->>'chatId', (p->>'messageId')::bigint, (p->>'threadId')::bigint, coalesce((p->>'finishing')::boolean, false)
  FROM kept_values k, jsonb_array_elements(CASE WHEN jsonb_typeof(k.value::jsonb) = 'array' THEN k.value::jsonb ELSE '[]'::jsonb END) AS p
 WHERE k.name = 'telegram-placeholders'
   AND jsonb_typeof(p) = 'object' AND jsonb_typeof(p->'chat') = 'string' AND jsonb_typeof(p->'source') = 'string'
   AND jsonb_typeof(p->'chatId') = 'string' AND jsonb_typeof(p->'messageId') = 'number'
ON CONFLICT DO NOTHING;
DELETE FROM kept_values WHERE name = 'telegram-placeholders';
