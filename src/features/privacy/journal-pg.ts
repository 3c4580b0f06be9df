/**
 * The forget/purge journal (journal.ts) in PostgreSQL: one row per change under way in
 * `privacy_journal` (migrations/pg/060_privacy_journal.sql), its record as the same JSON text a
 * file holds. Each call is one statement, committed when it resolves — what the file's
 * temp + fsync + rename gives. A record belongs to the one change that wrote it (its random id),
 * so no row lock is needed; `left` reads every row of its kind, as a start reads the folder.
 *
 * Rows that held a forget's words are rewritten without them and then deleted: the table's old
 * row versions keep their bytes until PostgreSQL reuses the space (docs/postgres.md, "Forget and
 * purge in PostgreSQL").
 */
import type { Logger } from '../../core/log.js';
import type { Database } from '../../storage/pg/database.js';
import { newRecordId, readableRecord, type ChangeJournal, type JournalRecord } from './journal.js';

/** The journal's two kinds, named as their folders are. */
export type JournalKind = 'forgetting' | 'purging';

export class PgPrivacyJournal<T extends JournalRecord> implements ChangeJournal<T> {
  constructor(
    private readonly db: Database,
    readonly kind: JournalKind,
    private readonly log: Logger,
  ) {}

  async begin(record: T): Promise<string> {
    const id = newRecordId();
    await this.db.query('INSERT INTO privacy_journal (kind, id, record) VALUES ($1, $2, $3)', [this.kind, id, JSON.stringify(record)]);
    return id;
  }

  async update(id: string, record: T): Promise<void> {
    // An upsert, as the file's rename: a record is written whether or not a row is there.
    await this.db.query('INSERT INTO privacy_journal (kind, id, record) VALUES ($1, $2, $3) ON CONFLICT (kind, id) DO UPDATE SET record = EXCLUDED.record', [
      this.kind,
      id,
      JSON.stringify(record),
    ]);
  }

  async end(id: string): Promise<void> {
    await this.db.query('DELETE FROM privacy_journal WHERE kind = $1 AND id = $2', [this.kind, id]);
  }

  async left(): Promise<Array<{ id: string; record: T }>> {
    const { rows } = await this.db.query<{ id: string; record: string }>('SELECT id, record FROM privacy_journal WHERE kind = $1 ORDER BY id', [this.kind]);
    const out: Array<{ id: string; record: T }> = [];
    for (const row of rows) {
      const record = readableRecord<T>(row.record);
      if (record) out.push({ id: row.id, record });
      else {
        this.log.error({ kind: this.kind, id: row.id }, 'a record of a change under way could not be read; removed');
        await this.end(row.id);
      }
    }
    return out;
  }
}
