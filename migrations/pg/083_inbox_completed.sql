-- The tool calls of a message's earlier runs that ended (src/queue/inbox-pg.ts `callEnded`): a
-- tool that changes something is not run again with the same arguments when a process died
-- after the call and before the turn was saved. Tool names and hashes of arguments only, never
-- words. Added with a default: a process of the release before ignores it.
ALTER TABLE inbox ADD COLUMN completed jsonb NOT NULL DEFAULT '[]'::jsonb;
