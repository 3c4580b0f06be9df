/**
 * PgMemoryVersions, the versions of one scope's MEMORY.md (versions.ts) in PostgreSQL: a row
 * per version in `memory_versions` (its entry and text), and the scope's row in
 * `memory_version_log` (the next number, the rewrite guard's refusals) — what the file twin
 * keeps in versions/ (file-versions.ts). PgMemoryFiles calls `record` inside the transaction
 * that holds MEMORY.md's row, before the new text is written; the log's row is held too, so
 * versions are numbered and dropped one change at a time, by any number of processes.
 */
import type { Database, Sql } from '../../storage/pg/database.js';
import { versionEntry } from '../portable.js';
import { heldText, utf8, writeText } from './texts.js';
import { recordVersion, undoTargetIn, withoutLines, type MemoryVersions, type RefusalInfo, type Refusals, type VersionInfo } from '../versions.js';

/** A row of memory_versions but its text: VersionInfo's fields, `undoes` NULL when it undoes nothing. */
export type VersionRow = { [K in keyof Required<VersionInfo>]: K extends 'undoes' ? number | null : VersionInfo[K] };

export const VERSION_COLUMNS = 'n, at, source, added, removed, bytes, undoes';

/** A stored refusal: its JSON text as noted (fields in the order they came, as the file keeps them). */
export function refusalsOf(row: { refused_count: number; refused_last: string | null } | undefined): Refusals {
  if (!row) return { count: 0 };
  return { count: row.refused_count, ...(row.refused_last !== null ? { last: JSON.parse(row.refused_last) as RefusalInfo } : {}) };
}

export class PgMemoryVersions implements MemoryVersions {
  constructor(
    private readonly db: Database,
    private readonly scope: string,
  ) {}

  private async entries(sql: Sql = this.db): Promise<VersionInfo[]> {
    const { rows } = await sql.query<VersionRow>(`SELECT ${VERSION_COLUMNS} FROM memory_versions WHERE scope = $1 ORDER BY n`, [this.scope]);
    return rows.map(versionEntry);
  }

  /** Newest first. */
  async list(): Promise<VersionInfo[]> {
    return (await this.entries()).reverse();
  }

  async read(n: number): Promise<string | undefined> {
    if (!Number.isSafeInteger(n) || Math.abs(n) > 2 ** 31 - 1) return undefined;
    const { rows } = await this.db.query<{ body: Buffer | null }>('SELECT body FROM memory_versions WHERE scope = $1 AND n = $2', [this.scope, n]);
    return utf8(rows[0]?.body);
  }

  async refusals(): Promise<Refusals> {
    const { rows } = await this.db.query<{ refused_count: number; refused_last: string | null }>(
      'SELECT refused_count, refused_last FROM memory_version_log WHERE scope = $1',
      [this.scope],
    );
    return refusalsOf(rows[0]);
  }

  async noteRefusal(r: RefusalInfo): Promise<void> {
    // In a transaction, not a bare statement: a count that is rerun after a lost connection would count twice.
    await this.db.tx((sql) =>
      sql.query(
        `INSERT INTO memory_version_log (scope, refused_count, refused_last) VALUES ($1, 1, $2)
         ON CONFLICT (scope) DO UPDATE SET refused_count = memory_version_log.refused_count + 1,
           refused_last = EXCLUDED.refused_last, updated_at = now()`,
        [this.scope, JSON.stringify(r)],
      ),
    );
  }

  /** The scope's log row, made if missing, held until the transaction ends; the next number. */
  private async holdLog(sql: Sql): Promise<number> {
    await sql.query('INSERT INTO memory_version_log (scope) VALUES ($1) ON CONFLICT DO NOTHING', [this.scope]);
    const { rows } = await sql.query<{ next: number }>('SELECT next FROM memory_version_log WHERE scope = $1 FOR UPDATE', [this.scope]);
    return rows[0]!.next;
  }

  /** Inside the transaction holding MEMORY.md's row: records `before` → `after` (versions.ts, recordVersion). */
  async record(sql: Sql, before: string, after: string, source: string): Promise<number> {
    const log = { next: await this.holdLog(sql), entries: await this.entries(sql) };
    const last = log.entries.at(-1);
    const lastText = last
      ? utf8((await sql.query<{ body: Buffer | null }>('SELECT body FROM memory_versions WHERE scope = $1 AND n = $2', [this.scope, last.n])).rows[0]?.body)
      : undefined;
    const { added, dropped } = recordVersion(log, lastText, before, after, source);
    for (const { n, text } of added) {
      const e = log.entries.find((x) => x.n === n)!;
      await sql.query(`INSERT INTO memory_versions (scope, ${VERSION_COLUMNS}, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [
        this.scope,
        e.n,
        e.at,
        e.source,
        e.added,
        e.removed,
        e.bytes,
        e.undoes ?? null,
        Buffer.from(text, 'utf8'),
      ]);
    }
    if (dropped.length) await sql.query('DELETE FROM memory_versions WHERE scope = $1 AND n = ANY($2::int[])', [this.scope, dropped]);
    await sql.query('UPDATE memory_version_log SET next = $2, updated_at = now() WHERE scope = $1', [this.scope, log.next]);
    return added.at(-1)!.n;
  }

  async undoTarget(): Promise<{ change: VersionInfo; restore: VersionInfo } | undefined> {
    return undoTargetIn(await this.entries());
  }

  /**
   * Removes the lines `drop` accepts from every kept version, in one transaction holding the
   * log's row (no version is recorded meanwhile) — and from `versions/N.md` files a move brought
   * in that the index did not list, as the file twin redacts every such file.
   */
  async redact(drop: (line: string) => boolean): Promise<number> {
    return this.db.tx(async (sql) => {
      await this.holdLog(sql);
      let removed = 0;
      const { rows } = await sql.query<{ n: number; body: Buffer }>(
        'SELECT n, body FROM memory_versions WHERE scope = $1 AND body IS NOT NULL ORDER BY n FOR UPDATE',
        [this.scope],
      );
      for (const r of rows) {
        const cut = withoutLines(r.body.toString('utf8'), drop);
        if (cut.removed === 0) continue;
        removed += cut.removed;
        const body = Buffer.from(cut.text, 'utf8');
        await sql.query('UPDATE memory_versions SET body = $3, bytes = $4 WHERE scope = $1 AND n = $2', [this.scope, r.n, body, body.length]);
      }
      const loose = await sql.query<{ name: string }>(String.raw`SELECT name FROM memory_files WHERE scope = $1 AND name ~ '^versions/\d+\.md$'`, [this.scope]);
      for (const { name } of loose.rows) {
        const cut = withoutLines((await heldText(sql, this.scope, name)) ?? '', drop);
        if (cut.removed === 0) continue;
        removed += cut.removed;
        await writeText(sql, this.scope, name, cut.text);
      }
      return removed;
    });
  }
}
