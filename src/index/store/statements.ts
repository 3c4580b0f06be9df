/**
 * Prepared statements kept per SQL text, for readers that run the same few queries many times
 * a second (the search: some 500 rows over a dozen queries per question).
 */
import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';

export class Statements {
  private readonly cache = new Map<string, Statement>();
  private readonly rawCache = new Map<string, { st: Statement; names: string[] }>();

  constructor(private readonly db: Db) {}

  /** The statement of `sql`, prepared once. */
  get(sql: string): Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }

  /**
   * The rows of a query as objects built here from better-sqlite3's raw arrays: its own row
   * objects cost about 1.7 times as much CPU per row, and a search reads some 500 rows.
   */
  rows<T>(sql: string, ...params: unknown[]): T[] {
    let r = this.rawCache.get(sql);
    if (!r) {
      const st = this.db.prepare(sql).raw(true);
      r = { st, names: st.columns().map((c) => c.name) };
      this.rawCache.set(sql, r);
    }
    const { st, names } = r;
    return (st.all(...params) as unknown[][]).map((a) => {
      const o: Record<string, unknown> = {};
      for (let i = 0; i < names.length; i++) o[names[i]!] = a[i];
      return o as T;
    });
  }
}
