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
import type { Portable } from '../storage/portable.js';
import { cleanEntry, noteInto, type ChatName, type ChatNames, type NamedChat } from './names.js';

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
      const { rows } = await this.db.query<Row>('SELECT chat, kind, name, parent FROM chat_names');
      const book = new Map<string, ChatName>();
      for (const r of rows) {
        const e = entryOf(r);
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

  /** What moves between the modes: the rows as `load` reads them (FileChatNames.portable). */
  portable(): Portable<NamedChat> {
    const rows = async () => {
      await this.flush();
      const { rows } = await this.db.query<Row>('SELECT chat, kind, name, parent FROM chat_names ORDER BY chat');
      return rows.flatMap((r) => {
        const e = entryOf(r);
        return e ? [{ chat: r.chat, ...e }] : [];
      });
    };
    return {
      portableName: 'chat names',
      dump: async function* () {
        yield* await rows();
      },
      load: async (items) => {
        const all: NamedChat[] = [];
        for await (const { chat, ...e } of items) {
          const entry = cleanEntry(e);
          if (entry) all.push({ chat, ...entry });
        }
        await this.upsert(all);
        for (const { chat, ...e } of all) this.book.set(chat, e);
        return all.length;
      },
      isEmpty: async () => (await this.db.query('SELECT 1 FROM chat_names LIMIT 1')).rowCount === 0,
      clear: async () => {
        await this.flush();
        await this.db.query('DELETE FROM chat_names');
        this.book.clear();
        this.unwritten.clear();
      },
    };
  }

  /** Writes the entries changed since the last write (the same upsert twice is harmless: a rerun after a lost connection). */
  private async write(): Promise<void> {
    const keys = [...this.unwritten].filter((k) => this.book.has(k));
    this.unwritten.clear();
    if (keys.length === 0) return;
    try {
      await this.upsert(keys.map((chat) => ({ chat, ...this.book.get(chat)! })));
    } catch (err) {
      for (const key of keys) this.unwritten.add(key);
      throw err;
    }
  }

  /** Stores these entries (the same upsert twice is harmless: a rerun after a lost connection). */
  private async upsert(entries: NamedChat[]): Promise<void> {
    if (entries.length === 0) return;
    await this.db.query(
      `INSERT INTO chat_names (chat, kind, name, parent)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
       ON CONFLICT (chat) DO UPDATE SET kind = EXCLUDED.kind, name = coalesce(EXCLUDED.name, chat_names.name),
         parent = EXCLUDED.parent, updated_at = now()`,
      [entries.map((e) => e.chat), entries.map((e) => e.kind), entries.map((e) => e.name ?? null), entries.map((e) => e.parent ?? null)],
    );
  }
}

type Row = { chat: string; kind: string; name: string | null; parent: string | null };

/** A row as a ChatName (cleaned as the file's entries are at reading), or undefined when it is not one. */
const entryOf = (r: Row): ChatName | undefined => cleanEntry({ kind: r.kind, name: r.name ?? undefined, parent: r.parent ?? undefined });
