-- Runtime settings (src/config/runtime-pg.ts): the owner's JSON text, as runtime-config.json
-- holds it in the embedded mode — kept as text, not jsonb, so a broken text the owner stores is
-- refused by the daemon with the key it names, like a broken file. One row, always there;
-- NULL settings: nothing stored, the defaults. `version` grows with each change; every change
-- tells the running processes (NOTIFY membot_runtime_config), which read the row again.
CREATE TABLE runtime_config (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  settings text,
  version bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO runtime_config (id) VALUES (true);

CREATE FUNCTION runtime_config_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('membot_runtime_config', NEW.version::text);
  RETURN NULL;
END $$;

CREATE TRIGGER runtime_config_changed AFTER UPDATE ON runtime_config
  FOR EACH ROW EXECUTE FUNCTION runtime_config_changed();
