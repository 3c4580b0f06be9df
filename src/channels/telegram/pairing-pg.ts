/**
 * The PairingStore (pairing.ts) in PostgreSQL: the pairing record as one jsonb row of
 * `telegram_pairing` (migrations/pg/003_telegram.sql), changed by PairingRules inside one
 * transaction that holds the row (`SELECT … FOR UPDATE`) — what the file lock is for
 * pairing.json. So requests from several processes at once never pass the 3 codes, and an
 * approval by the `pair` command is seen by every daemon at its next call. The record stays
 * small (at most 3 codes, 100 waiting strangers, 200 told groups, the approved users).
 * `isApproved` and `isGroupApproved` ask the database on each call: one indexed read of one row.
 */
import type { Database, Sql } from '../../storage/pg/database.js';
import { toPairingData, type PairingData, type PairingOptions } from './pairing.js';
import { PairingRecordStore, inWrittenOrder } from './pairing-record.js';

export class PgPairingStore extends PairingRecordStore {
  constructor(
    private readonly db: Database,
    opts: PairingOptions = {},
  ) {
    super(opts);
  }

  isApproved(userId: string): Promise<boolean> {
    return this.contains('approved', { userId });
  }

  isGroupApproved(chatId: string): Promise<boolean> {
    return this.contains('groups', { chatId });
  }

  /** Whether the record's list `key` has an entry with these fields (jsonb containment). */
  private async contains(key: 'approved' | 'groups', entry: Record<string, string>): Promise<boolean> {
    const { rows } = await this.db.query<{ yes: boolean }>('SELECT coalesce(data -> $1::text @> $2::jsonb, false) AS yes FROM telegram_pairing', [
      key,
      JSON.stringify([entry]),
    ]);
    return rows[0]?.yes === true;
  }

  protected read(sql: Sql = this.db, lock = false): Promise<PairingData> {
    return sql
      .query<{ data: Partial<PairingData> }>(`SELECT data FROM telegram_pairing${lock ? ' FOR UPDATE' : ''}`)
      .then(({ rows }) => inWrittenOrder(toPairingData(rows[0]?.data ?? {})));
  }

  protected async replace(data: PairingData, sql: Sql = this.db): Promise<void> {
    await sql.query(
      `INSERT INTO telegram_pairing (id, data) VALUES (true, $1::jsonb)
       ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data, updated_at = now()`,
      [JSON.stringify(data)],
    );
  }

  /** Read-modify-write in one transaction holding the row; written only when something changed. */
  protected update<T>(fn: (data: PairingData) => T): Promise<T> {
    return this.db.tx(async (sql) => {
      const { result, data, changed } = this.applyChange(await this.read(sql, true), fn);
      if (changed) await this.replace(data, sql);
      return result;
    });
  }
}
