/**
 * A KeptValue (storage/kept.ts) as one row of `kept_values` (migrations/pg/061_kept_values.sql).
 * Each call is one statement: a write is committed when it resolves. `keepFirst` lets the
 * database decide between processes that start at once (`ON CONFLICT DO NOTHING`), so they all
 * keep the same value.
 */
import type { KeptValue } from '../kept.js';
import type { Database } from './database.js';

export class PgKeptValue implements KeptValue {
  readonly where: string;

  constructor(
    private readonly db: Database,
    readonly name: string,
  ) {
    this.where = `PostgreSQL (${db.where}, kept_values '${name}')`;
  }

  async read(): Promise<string | undefined> {
    const { rows } = await this.db.query<{ value: string }>('SELECT value FROM kept_values WHERE name = $1', [this.name]);
    return rows[0]?.value;
  }

  async write(value: string): Promise<void> {
    await this.db.query('INSERT INTO kept_values (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()', [
      this.name,
      value,
    ]);
  }

  async keepFirst(value: string): Promise<string> {
    await this.db.query('INSERT INTO kept_values (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [this.name, value]);
    return (await this.read()) ?? value;
  }
}
