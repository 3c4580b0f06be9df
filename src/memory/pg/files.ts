/**
 * PgMemoryFiles, one scope's memory (files.ts) in PostgreSQL: a row per file in `memory_files`
 * (migrations/pg/040_memory_files.sql), the versions in PgMemoryVersions. What the file twin
 * (file-memory.ts) does under a file's lock, a transaction does holding the file's row:
 *
 * - `update` inserts the row when missing (so there is a row to hold), takes it FOR UPDATE, runs
 *   `change` on its text and writes the result — or deletes the row it made when nothing
 *   changed. `tx` may run all of this again after a lost connection; `change` is a pure function.
 * - `appendNote` inserts the line as a row of its own in `memory_appends`, holding the file's
 *   row FOR SHARE (appends to one note run side by side; a change waits for them, and they for
 *   it): the note is neither read nor stored again, and no earlier byte is touched. A change of
 *   the note (update, redact) writes the whole text to the file's row and deletes its appended
 *   lines; reads take the row's text and its lines (the view `memory_texts`). An append is
 *   durable when it returns, `durable` false or not (`syncNote` has nothing left to do): a
 *   commit costs what the file twin's fsync saves, and the lines are then safe without the
 *   session log's help.
 *
 * A name is resolved as the file twin resolves it in its folder (storage/paths.ts,
 * resolveLexically) and stored as resolved; one that leads out is refused (storage.path_escape).
 * There are no links or special files to refuse. What is read back has secrets scrubbed, as
 * the file twin's reads do.
 */
import path from 'node:path';
import type { Database, Sql } from '../../storage/pg/database.js';
import { resolveLexically } from '../../storage/paths.js';
import { notAFile } from '../../storage/regular.js';
import type { Redaction } from '../../storage/redaction.js';
import type { Footprint } from '../../storage/footprint.js';
import { scrubSecrets } from '../../core/log.js';
import {
  HISTORY_FILE,
  MEMORY_FILE,
  MONTHLY_RE,
  NOTE_RE,
  countLinesOf,
  isNoteOrHistory,
  replaceSection,
  searchTexts,
  withItem,
  withNewline,
  type LineCounts,
  type MemoryFiles,
  type NoteFileInfo,
  type SearchHit,
} from '../files.js';
import { PgMemoryVersions } from './versions.js';
import { bytes, heldText, utf8, writeText } from './texts.js';

/** Where names are resolved: any absolute folder will do, nothing is opened there. */
const FOLDER = '/memory';

/** `name` as stored: resolved inside the scope's folder; refused when it leads out or names the folder itself. */
export function storedName(name: string): string {
  const rel = path.relative(FOLDER, resolveLexically(FOLDER, name));
  if (rel === '') throw notAFile(name, 'a folder');
  return rel;
}

export class PgMemoryFiles implements MemoryFiles {
  readonly versions: PgMemoryVersions;

  constructor(
    private readonly db: Database,
    /** The scope key: `channel:chatId`, or 'global'. */
    readonly scope: string,
  ) {
    this.versions = new PgMemoryVersions(db, scope);
  }

  /** A file's text as kept ('' when there is none), not scrubbed. */
  private async raw(name: string, sql: Sql = this.db): Promise<string | undefined> {
    const { rows } = await sql.query<{ body: Buffer }>('SELECT body FROM memory_texts WHERE scope = $1 AND name = $2', [this.scope, name]);
    return utf8(rows[0]?.body);
  }

  private async read(name: string): Promise<string> {
    return scrubSecrets((await this.raw(storedName(name))) ?? '');
  }

  async update(name: string, change: (current: string) => string | null, source = 'edit'): Promise<boolean> {
    const stored = storedName(name);
    return this.db.tx(async (sql) => {
      const made = await sql.query('INSERT INTO memory_files (scope, name, body) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [this.scope, stored, bytes('')]);
      const current = scrubSecrets((await heldText(sql, this.scope, stored))!);
      const changed = change(current);
      // A key pasted into memory (or echoed by a provider) never reaches the table.
      const next = changed === null ? current : scrubSecrets(changed);
      if (next === current) {
        if (made.rowCount > 0) await sql.query('DELETE FROM memory_files WHERE scope = $1 AND name = $2', [this.scope, stored]);
        return false;
      }
      if (stored === MEMORY_FILE) await this.versions.record(sql, current, next, source);
      await writeText(sql, this.scope, stored, next);
      return true;
    });
  }

  changeMemory(source: string, change: (current: string) => string | null): Promise<boolean> {
    return this.update(MEMORY_FILE, change, source);
  }

  readMemory(): Promise<string> {
    return this.read(MEMORY_FILE);
  }

  writeMemory(content: string, source = 'rewrite'): Promise<boolean> {
    return this.update(MEMORY_FILE, () => withNewline(content), source);
  }

  async appendMemory(fact: string, section?: string): Promise<void> {
    await this.changeMemory('tool memory_add', (cur) => withItem(cur, fact, section));
  }

  async rewriteSection(section: string, content: string): Promise<void> {
    await this.changeMemory('tool memory_rewrite', (cur) => replaceSection(cur, section, content));
  }

  readNote(date: string): Promise<string> {
    return this.read(`${date}.md`);
  }

  readHistory(): Promise<string> {
    return this.read(HISTORY_FILE);
  }

  async readVersion(n: number): Promise<string | undefined> {
    const text = await this.versions.read(n);
    return text === undefined ? undefined : scrubSecrets(text);
  }

  /**
   * One line appended to the note, as the file twin appends (a newline first when the text kept
   * does not end with one: then put in the file's row, once). In a transaction: a bare statement
   * is rerun after a lost connection, and an append that ran twice would be a line twice.
   */
  async appendNote(date: string, line: string, _durable = true): Promise<void> {
    const stored = storedName(`${date}.md`);
    await this.db.tx(async (sql) => {
      await sql.query('INSERT INTO memory_files (scope, name, body) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [this.scope, stored, bytes('')]);
      const { rows } = await sql.query<{ open: boolean }>('SELECT open FROM memory_files WHERE scope = $1 AND name = $2 FOR SHARE', [this.scope, stored]);
      if (rows[0]!.open) {
        await sql.query(String.raw`UPDATE memory_files SET body = body || '\x0a'::bytea WHERE scope = $1 AND name = $2 AND open`, [this.scope, stored]);
      }
      await sql.query('INSERT INTO memory_appends (scope, name, body) VALUES ($1, $2, $3)', [this.scope, stored, bytes(`${scrubSecrets(line)}\n`)]);
    });
  }

  /** Every append is committed when it returns: nothing left to make durable (the name is still checked, as the file twin's is). */
  async syncNote(date: string): Promise<void> {
    storedName(`${date}.md`);
  }

  async appendHistory(entry: string, at: Date = new Date()): Promise<void> {
    const iso = at.toISOString();
    const block = `## ${iso}\n${entry.trim()}\n\n`;
    await this.update(HISTORY_FILE, (cur) => cur + block);
    await this.update(`HISTORY-${iso.slice(0, 7)}.md`, (cur) => cur + block);
  }

  async listNotes(): Promise<NoteFileInfo[]> {
    const { rows } = await this.db.query<{ name: string; size: number }>(
      String.raw`SELECT name, length(body) AS size FROM memory_texts WHERE scope = $1 AND name ~ '^\d{4}-\d{2}-\d{2}\.md$'`,
      [this.scope],
    );
    return rows
      .flatMap((r) => {
        const m = NOTE_RE.exec(r.name);
        return m ? [{ date: m[1]!, bytes: r.size }] : [];
      })
      .sort((a, b) => a.date.localeCompare(b.date));
  }

  async readNoteOrHistory(name: string): Promise<string | undefined> {
    return isNoteOrHistory(name) ? this.read(name) : undefined;
  }

  /**
   * The scope's files whose names `want` accepts, as kept (not scrubbed). `like`: a regular
   * expression the database filters names with first (no narrower than `want`), so big texts
   * that are not wanted (MEMORY.md for a search) are not sent.
   */
  private async files(like: string, want: (name: string) => boolean): Promise<Array<{ name: string; text: string }>> {
    const { rows } = await this.db.query<{ name: string; body: Buffer }>('SELECT name, body FROM memory_texts WHERE scope = $1 AND name ~ $2', [
      this.scope,
      like,
    ]);
    return rows.filter((r) => want(r.name)).map((r) => ({ name: r.name, text: r.body.toString('utf8') }));
  }

  async search(keyword: string, limit = 50): Promise<SearchHit[]> {
    if (!keyword.trim()) return [];
    const texts = await this.files(String.raw`^(\d{4}-\d{2}-\d{2}|HISTORY-\d{4}-\d{2})\.md$`, (n) => NOTE_RE.test(n) || MONTHLY_RE.test(n));
    return searchTexts(
      texts.map((t) => ({ name: t.name, text: scrubSecrets(t.text) })),
      keyword,
      limit,
    );
  }

  async countLines(test: (line: string) => boolean): Promise<LineCounts> {
    return countLinesOf(
      await this.files(String.raw`^(MEMORY|HISTORY|HISTORY-\d{4}-\d{2}|\d{4}-\d{2}-\d{2})\.md$`, (n) => n === MEMORY_FILE || isNoteOrHistory(n)),
      test,
    );
  }

  /**
   * The words marked in every file kept but MEMORY.md and the versions' (`versions.redact`),
   * each in a transaction holding its row. Names what changed as `<name> in memory_files`.
   */
  async redact(words: Redaction): Promise<string[]> {
    const changed: string[] = [];
    const { rows } = await this.db.query<{ name: string }>('SELECT name FROM memory_files WHERE scope = $1 ORDER BY name', [this.scope]);
    for (const { name } of rows) {
      if (name === MEMORY_FILE || name.startsWith('versions/')) continue;
      const done = await this.db.tx(async (sql) => {
        const text = await heldText(sql, this.scope, name);
        if (text === undefined || !words.test(text)) return false;
        const next = words.redact(text);
        if (next === text) return false;
        await writeText(sql, this.scope, name, next);
        return true;
      });
      if (done) changed.push(`${name} in memory_files`);
    }
    return changed;
  }

  /** The bytes of the scope's files and versions, and when one last changed. */
  async footprint(): Promise<Footprint> {
    const { rows } = await this.db.query<{ bytes: string | null; mtime: string | null }>(
      `SELECT sum(b)::text AS bytes, (extract(epoch FROM max(t)) * 1000)::text AS mtime FROM (
         SELECT length(body) AS b, updated_at AS t FROM memory_texts WHERE scope = $1
         UNION ALL SELECT coalesce(length(body), 0), NULL FROM memory_versions WHERE scope = $1
         UNION ALL SELECT 0, updated_at FROM memory_version_log WHERE scope = $1) AS kept`,
      [this.scope],
    );
    return { bytes: Number(rows[0]?.bytes ?? 0), mtime: Number(rows[0]?.mtime ?? 0) };
  }
}
