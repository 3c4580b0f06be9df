/**
 * The per-chat full-text index (schema v3). Every search runs inside one scope, so each word is
 * indexed under its scope: "coffee" said in the chat with code 7 becomes the FTS5 term
 * `z7xcoffee`. A query then reads only that chat's posting lists, however many other chats
 * share the file — with one shared vocabulary, a common word at 1M memories meant walking
 * every chat's postings before the scope filter (82.8 ms p95 against a 25 ms target).
 *
 * The words are split here in JS (the same way for stored text and for queries) and handed to
 * FTS5's `porter unicode61` tokenizer already prefixed. The prefix is made of consonants and
 * digits only, so Porter stemming of the word after it is unchanged ("z7xadopted" → "z7xadopt").
 * The table is contentless: the text lives once, in `memories`.
 */
import type Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';

type Db = Database.Database;

export const SCOPED_FTS = 'memories_fts_scoped';

/** Token characters: letters, digits, marks, private use (unicode61's defaults, plus marks). */
const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;

/** Letters of the prefix: no vowel and no "y", so stemming sees the word as it was. */
export function scopePrefix(code: number): string {
  return `z${code}x`;
}

function words(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
}

/** The document FTS5 indexes for a memory of this scope. */
export function scopedDocument(prefix: string, text: string): string {
  return words(text)
    .map((w) => prefix + w)
    .join(' ');
}

/**
 * One query term as an FTS5 phrase of prefixed words ("don't" is the phrase `z7xdon z7xt`,
 * matching how it was stored), or null when the term has no word characters.
 */
export function scopedTerm(prefix: string, term: string): string | null {
  const w = words(term);
  return w.length > 0 ? `"${w.map((x) => prefix + x).join(' ')}"` : null;
}

/** Small integer codes for scopes, so the prefix stays short. Cached; codes never change. */
export class ScopeCodes {
  private readonly known = new Map<string, number>();
  private readonly find: Statement;
  private readonly add: Statement;

  constructor(db: Db) {
    this.find = db.prepare('SELECT code FROM fts_scopes WHERE scope = ?');
    this.add = db.prepare('INSERT OR IGNORE INTO fts_scopes (scope) VALUES (?)');
  }

  /** The scope's code, or undefined when nothing of it was ever indexed. */
  lookup(scope: string): number | undefined {
    const hit = this.known.get(scope);
    if (hit !== undefined) return hit;
    const row = this.find.get(scope) as { code: number } | undefined;
    // Only found codes are cached: a scope without one may get one from the writer later.
    if (row) this.known.set(scope, row.code);
    return row?.code;
  }

  /** The scope's code, created on first use (call inside the writing transaction). */
  ensure(scope: string): number {
    const hit = this.lookup(scope);
    if (hit !== undefined) return hit;
    this.add.run(scope);
    return this.lookup(scope)!;
  }
}

/** Adds one memory to the scoped index; `rowid` is the memory's rowid. */
export class ScopedFtsWriter {
  private readonly codes: ScopeCodes;
  private readonly insert: Statement;

  constructor(db: Db) {
    this.codes = new ScopeCodes(db);
    this.insert = db.prepare(`INSERT INTO ${SCOPED_FTS} (rowid, words) VALUES (?, ?)`);
  }

  add(rowid: number | bigint, scope: string, content: string): void {
    this.insert.run(rowid, scopedDocument(scopePrefix(this.codes.ensure(scope)), content));
  }
}

/** Empties and refills the scoped index from `memories` (migration and `memory reindex`). */
export function rebuildScopedFts(db: Db): number {
  const writer = new ScopedFtsWriter(db);
  // Batches by rowid: better-sqlite3 cannot write while an iterator is open on the connection.
  const page = db.prepare('SELECT rowid AS r, scope, content FROM memories WHERE rowid > ? ORDER BY rowid LIMIT 5000');
  let n = 0;
  db.transaction(() => {
    db.exec(`INSERT INTO ${SCOPED_FTS}(${SCOPED_FTS}) VALUES ('delete-all')`);
    let last = 0;
    for (;;) {
      const rows = page.all(last) as Array<{ r: number; scope: string; content: string }>;
      if (rows.length === 0) break;
      for (const row of rows) writer.add(row.r, row.scope, row.content);
      n += rows.length;
      last = rows[rows.length - 1]!.r;
    }
  })();
  return n;
}
