/**
 * ChatNames (names.ts) in PostgreSQL: one row per chat in `chat_names`
 * (migrations/pg/004_chat_names.sql).
 *
 * `get` and `note` are synchronous, as callers use them (the intake notes a name with every
 * message; the memory page reads them): the names are held in memory, read at `load`, and a
 * change is written in the background — like the file, whose writes are background ones too:
 * names are not an acknowledged operation, and one not written is noted again with the chat's
 * next message. A failed write keeps its entries for the next one. Two processes may note the
 * same chat: a name not said does not erase one another process stored (`coalesce`). A name
 * noted by another process is seen here after the next `load`.
 */
import type { Logger } from '../core/log.js';
import type { ChatLabel } from '../core/message.js';
import type { Database } from '../storage/pg/database.js';
import { cleanEntry, noteInto, type ChatName, type ChatNames } from './names.js';

export class PgChatNames implements ChatNames {
  private book = new Map<string, ChatName>();
  /** Keys changed and not yet written. */
  private readonly unwritten = new Set<string>();
  /** The newest write; writes run one after another. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
  ) {}

  async load(): Promise<void> {
    try {
      const { rows } = await this.db.query<{ chat: string; kind: string; name: string | null; parent: string | null }>(
        'SELECT chat, kind, name, parent FROM chat_names',
      );
      const book = new Map<string, ChatName>();
      for (const r of rows) {
        const e = cleanEntry({ kind: r.kind, name: r.name ?? undefined, parent: r.parent ?? undefined });
        if (e) book.set(r.chat, e);
      }
      // Entries noted here and not yet written stay as noted.
      for (const key of this.unwritten) book.set(key, this.book.get(key)!);
      this.book = book;
    } catch (err) {
      // Only names: unreadable now, they are kept again as chats talk.
      this.log.warn({ err }, 'chat names could not be read; names are kept again as chats talk');
    }
  }

  get(key: string): ChatName | undefined {
    return this.book.get(key);
  }

  note(channel: string, chatId: string, label: ChatLabel | undefined): void {
    const changed = noteInto(this.book, channel, chatId, label);
    if (changed.length === 0) return;
    for (const key of changed) this.unwritten.add(key);
    this.writing = this.writing
      .then(() => this.write())
      .catch((err: unknown) => this.log.warn({ err }, 'chat names could not be written; they are written again with the next change'));
  }

  flush(): Promise<void> {
    return this.writing;
  }

  /** Removes these chats' names (purge, forget of a chat): what was deleted, one line, or [] when none had a name kept. */
  async erase(keys: readonly string[]): Promise<string[]> {
    await this.flush();
    for (const key of keys) {
      this.book.delete(key);
      this.unwritten.delete(key);
    }
    const { rowCount } = await this.db.query('DELETE FROM chat_names WHERE chat = ANY($1::text[])', [keys]);
    return rowCount > 0 ? [`${keys.length > 1 ? 'their names' : 'its name'} in the chat_names table`] : [];
  }

  /** Writes the entries changed since the last write (the same upsert twice is harmless: a rerun after a lost connection). */
  private async write(): Promise<void> {
    const keys = [...this.unwritten].filter((k) => this.book.has(k));
    this.unwritten.clear();
    if (keys.length === 0) return;
    const entries = keys.map((k) => this.book.get(k)!);
    try {
      await this.db.query(
        `INSERT INTO chat_names (chat, kind, name, parent)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
         ON CONFLICT (chat) DO UPDATE SET kind = EXCLUDED.kind, name = coalesce(EXCLUDED.name, chat_names.name),
           parent = EXCLUDED.parent, updated_at = now()`,
        [keys, entries.map((e) => e.kind), entries.map((e) => e.name ?? null), entries.map((e) => e.parent ?? null)],
      );
    } catch (err) {
      for (const key of keys) this.unwritten.add(key);
      throw err;
    }
  }
}
