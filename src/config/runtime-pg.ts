/**
 * The RuntimeConfigStore (runtime.ts) in PostgreSQL: the owner's settings are the JSON text in
 * the one row of `runtime_config` (migrations/pg/002_runtime_config.sql), checked by the same
 * parseRuntimeConfig as the file.
 *
 * The interface is synchronous (`get()` is read on every turn), so this store keeps the settings
 * in memory: read at `open`, and read again whenever the row changes — an update tells every
 * process (NOTIFY, through Database.listen), and after a lost listening connection the row is
 * read again, so a change made meanwhile is not missed. A change is in force in a running
 * process as soon as its notification arrives (milliseconds), not at the very next `get()` as
 * with the file; nothing here writes the settings but `storeRuntimeConfig`, the owner's way.
 * A bad change is logged once and the last good settings stay in force, as with the file.
 */
import type { Logger } from '../core/log.js';
import type { Database, Sql } from '../storage/pg/database.js';
import type { Portable } from '../storage/portable.js';
import { DEFAULT_RUNTIME_CONFIG, parseRuntimeConfig, type RuntimeConfig, type RuntimeConfigStore, type StoredSettings } from './runtime.js';

const CHANNEL = 'membot_runtime_config';
/** How the settings are named in a problem line (the file store names its file). */
const WHERE = 'runtime_config (PostgreSQL)';

type Row = { settings: string | null; version: string };

export class PgRuntimeConfigStore implements RuntimeConfigStore, Portable<StoredSettings> {
  readonly portableName = 'runtime settings';
  private current: RuntimeConfig = structuredClone(DEFAULT_RUNTIME_CONFIG);
  private problem: string | null = null;
  private loadedVersion = -1;
  /** One read of the row at a time; a notification during one runs another after it. */
  private reading: Promise<void> | undefined;
  private again = false;
  private stop: (() => void) | undefined;

  private constructor(
    private readonly db: Database,
    private readonly log?: Logger,
  ) {}

  /** A store with the stored settings read, and listening for changes. */
  static async open(db: Database, log?: Logger): Promise<PgRuntimeConfigStore> {
    const store = new PgRuntimeConfigStore(db, log);
    // Listening first, then reading: a change between the two is read by the notification.
    store.stop = await db.listen(CHANNEL, () => store.refresh());
    const row = await store.read();
    try {
      store.apply(row, true);
    } catch (err) {
      store.problem = `${WHERE} ${(err as Error).message}`;
    }
    return store;
  }

  init(): string | null {
    return this.problem;
  }

  get(): RuntimeConfig {
    return this.current;
  }

  /** The version of the row in force here (tests wait for a change to arrive). */
  get version(): number {
    return this.loadedVersion;
  }

  /** Stops listening (the Database's close ends the connection). */
  close(): void {
    this.stop?.();
  }

  /** Reads the row again (a notification, a reconnect); never throws: a failure is logged and the settings stay. */
  refresh(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      do {
        this.again = false;
        try {
          this.apply(await this.read(), false);
        } catch (err) {
          this.log?.error({ err: (err as Error).message }, `runtime config ${WHERE}: ${(err as Error).message}; keeping the previous settings`);
        }
      } while (this.again);
    })().finally(() => (this.reading = undefined));
    return this.reading;
  }

  async *dump(): AsyncIterable<StoredSettings> {
    const { settings } = await this.read();
    if (settings !== null) yield { settings };
  }

  /** Stores the (last) settings given, as the owner would: every running process reads them. */
  async load(items: AsyncIterable<StoredSettings>): Promise<number> {
    let n = 0;
    for await (const item of items) {
      await storeRuntimeConfig(this.db, item.settings);
      n++;
    }
    return n;
  }

  async isEmpty(): Promise<boolean> {
    return (await this.read()).settings === null;
  }

  async clear(): Promise<void> {
    await storeRuntimeConfig(this.db, undefined);
  }

  private async read(): Promise<Row> {
    const { rows } = await this.db.query<Row>('SELECT settings, version::text AS version FROM runtime_config');
    return rows[0] ?? { settings: null, version: '0' };
  }

  /** Puts the row's settings in force; a bad text throws, keeping the settings before, with its version counted as seen. */
  private apply(row: Row, first: boolean): void {
    const version = Number(row.version);
    if (!first && version === this.loadedVersion) return;
    this.loadedVersion = version;
    this.current = row.settings === null ? structuredClone(DEFAULT_RUNTIME_CONFIG) : parseRuntimeConfig(row.settings);
    if (!first) this.log?.info({ version }, 'runtime config reloaded');
  }
}

/**
 * The owner stores settings (JSON text; undefined takes them away): what editing
 * runtime-config.json is in the embedded mode. Every running process reads them at once.
 */
export async function storeRuntimeConfig(sql: Sql, text: string | undefined): Promise<number> {
  const { rows } = await sql.query<{ version: string }>(
    'UPDATE runtime_config SET settings = $1, version = version + 1, updated_at = now() RETURNING version::text AS version',
    [text ?? null],
  );
  return Number(rows[0]!.version);
}
