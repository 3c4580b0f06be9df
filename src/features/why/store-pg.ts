/**
 * The WhyStore (store.ts) in PostgreSQL: one row of `why_records` per answer
 * (migrations/pg/080_why.sql), the record as JSON text. Adding an answer and dropping the chat's
 * oldest beyond KEEP_PER_CHAT is one transaction; a /forget rewrites, in one transaction holding
 * the chat's rows (`FOR UPDATE`), each row whose items held the words — a row deleted or updated
 * leaves no readable copy (the contract's "no byte" check is the files' own, docs/postgres.md).
 */
import type { Database, Sql } from '../../storage/pg/database.js';
import { KEEP_PER_CHAT, toWhyRecord, withoutMatching, type WhyRecord } from './record.js';
import { pick, type WhyStore } from './store.js';

export class PgWhyStore implements WhyStore {
  readonly portableName = 'why records';

  constructor(private readonly db: Database) {}

  /** The chat's records, oldest first (`lock`: held for the transaction). */
  private async rows(sql: Sql, chat: string, lock = false): Promise<Array<{ seq: string; record: WhyRecord }>> {
    const { rows } = await sql.query<{ seq: string; body: string }>(
      `SELECT seq, body FROM why_records WHERE chat = $1 ORDER BY seq${lock ? ' FOR UPDATE' : ''}`,
      [chat],
    );
    return rows.flatMap((r) => {
      const record = parse(r.body);
      return record ? [{ seq: String(r.seq), record }] : [];
    });
  }

  async add(record: WhyRecord): Promise<void> {
    await this.db.tx(async (sql) => {
      await sql.query(
        `INSERT INTO why_records (chat, turn, body) VALUES ($1, $2, $3)
         ON CONFLICT (chat, turn) DO UPDATE SET body = EXCLUDED.body`,
        [record.chat, record.turn, JSON.stringify(record)],
      );
      await sql.query(
        `DELETE FROM why_records WHERE chat = $1 AND seq NOT IN
           (SELECT seq FROM why_records WHERE chat = $1 ORDER BY seq DESC LIMIT $2)`,
        [record.chat, KEEP_PER_CHAT],
      );
    });
  }

  async last(chat: string): Promise<WhyRecord | undefined> {
    const { rows } = await this.db.query<{ body: string }>('SELECT body FROM why_records WHERE chat = $1 ORDER BY seq DESC LIMIT 1', [chat]);
    return rows[0] ? parse(rows[0].body) : undefined;
  }

  async find(chat: string, by: { sent: string } | { turn: string }): Promise<WhyRecord | undefined> {
    return pick(
      (await this.rows(this.db, chat)).map((r) => r.record),
      by,
    );
  }

  forget(chat: string, test: (text: string) => boolean): Promise<number> {
    return this.db.tx(async (sql) => {
      let removed = 0;
      for (const { seq, record } of await this.rows(sql, chat, true)) {
        const left = withoutMatching(record, test);
        if (!left) continue;
        removed += record.items.length - left.items.length;
        await sql.query('UPDATE why_records SET body = $2 WHERE seq = $1', [seq, JSON.stringify(left)]);
      }
      return removed;
    });
  }

  async chats(): Promise<string[]> {
    const { rows } = await this.db.query<{ chat: string }>('SELECT DISTINCT chat FROM why_records ORDER BY chat');
    return rows.map((r) => r.chat);
  }

  async deleteChat(chat: string): Promise<number> {
    const { rowCount } = await this.db.query('DELETE FROM why_records WHERE chat = $1', [chat]);
    return rowCount ?? 0;
  }

  async close(): Promise<void> {}

  async *dump(): AsyncIterable<WhyRecord> {
    for (const chat of await this.chats()) for (const r of await this.rows(this.db, chat)) yield r.record;
  }

  async load(items: AsyncIterable<WhyRecord>): Promise<number> {
    let n = 0;
    for await (const r of items) {
      await this.add(r);
      n++;
    }
    return n;
  }

  async isEmpty(): Promise<boolean> {
    const { rows } = await this.db.query('SELECT 1 FROM why_records LIMIT 1');
    return rows.length === 0;
  }

  async clear(): Promise<void> {
    await this.db.query('DELETE FROM why_records');
  }
}

function parse(body: string): WhyRecord | undefined {
  try {
    return toWhyRecord(JSON.parse(body));
  } catch {
    return undefined;
  }
}
