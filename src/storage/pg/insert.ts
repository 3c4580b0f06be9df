/**
 * Many rows in few statements: `INSERT … VALUES (…), (…)` in batches, each row's values in the
 * order of the columns named. A statement takes at most 65,535 parameters; BATCH rows of a few
 * dozen columns stay well below.
 */
import type { Sql } from './database.js';

const BATCH = 500;

/**
 * Inserts `rows` into `table` (`columns`: "a, b, c"), BATCH rows to a statement; `tail` ends each
 * statement (an ON CONFLICT clause). Run it inside a transaction for all or none.
 */
export async function insertRows(sql: Sql, table: string, columns: string, rows: readonly unknown[][], tail = ''): Promise<void> {
  const width = columns.split(',').length;
  for (let at = 0; at < rows.length; at += BATCH) {
    const batch = rows.slice(at, at + BATCH);
    const marks = batch.map((_, i) => `(${Array.from({ length: width }, (_, j) => `$${i * width + j + 1}`).join(', ')})`).join(', ');
    await sql.query(`INSERT INTO ${table} (${columns}) VALUES ${marks}${tail ? ` ${tail}` : ''}`, batch.flat());
  }
}
