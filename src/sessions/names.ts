/**
 * The chats' names, kept when seen: `workspace/sessions.names.json` (beside sessions/ like the
 * session log), one small entry per chat — its kind (private, group, forum topic), the name
 * people see (a user's name, a group's title, a topic's name) and, for a topic, its group.
 * The channel says what it knows with each message (InboundMessage.chat); what it does not say
 * (Telegram sends a topic's name only with some messages) keeps the name seen before.
 *
 * Only the memory page reads it, so a chat can be shown as "Beekeepers › Honey sales" instead
 * of `telegram:-100123:7`. Names are user-controlled text: control and invisible formatting
 * characters are dropped and the length capped before anything is kept. Written only when an
 * entry changes (atomic, under the file's lock, one write at a time); `purge` removes a chat's
 * entry (dropChatNames), so no byte of its name is left.
 *
 * Callers see the `ChatNames` interface; `FileChatNames` is today's implementation. What any
 * implementation must do: test/sessions/names.contract.ts.
 */
import { readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../core/log.js';
import type { ChatKind, ChatLabel } from '../core/message.js';
import { chatKey } from '../core/chat.js';
import { withFileLock, writeFileAtomic } from '../storage/atomic.js';
import type { Portable } from '../storage/portable.js';

/** One kept entry. */
export interface ChatName {
  kind: ChatKind;
  name?: string;
  /** A topic's group, as a session key (`channel:chatId`). */
  parent?: string;
}

/** What moves between the modes (storage/portable.ts): one chat's entry, with its key. */
export type NamedChat = { chat: string } & ChatName;

/** Telegram allows 128 characters for a title; a list entry needs far fewer. */
export const MAX_NAME_CHARS = 64;
const KINDS = new Set<ChatKind>(['private', 'group', 'topic']);
// C0/C1 controls, zero-width and bidi formatting characters, line/paragraph separators, BOM.
// eslint-disable-next-line no-control-regex
const UNSEEN = /[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/g;

/** A name fit to keep and show: one line, no control or invisible characters, at most MAX_NAME_CHARS. */
export function cleanName(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const s = raw.slice(0, 1000).toWellFormed().replace(UNSEEN, ' ').replace(/\s+/g, ' ').trim();
  if (!s) return undefined;
  const chars = [...s];
  return chars.length <= MAX_NAME_CHARS
    ? s
    : `${chars
        .slice(0, MAX_NAME_CHARS - 1)
        .join('')
        .trimEnd()}…`;
}

/** A stored entry as a ChatName (its name cleaned again), or undefined when it is not one. */
export function cleanEntry(raw: unknown): ChatName | undefined {
  const e = raw as Record<string, unknown> | null;
  if (!e || typeof e !== 'object' || !KINDS.has(e.kind as ChatKind)) return undefined;
  const name = cleanName(e.name);
  return { kind: e.kind as ChatKind, ...(name ? { name } : {}), ...(typeof e.parent === 'string' ? { parent: e.parent } : {}) };
}

const same = (a: ChatName | undefined, b: ChatName): boolean => a?.kind === b.kind && a.name === b.name && a.parent === b.parent;

async function readBook(file: string): Promise<Map<string, ChatName>> {
  const book = new Map<string, ChatName>();
  const json = JSON.parse(await readFile(file, 'utf8')) as { chats?: Record<string, unknown> };
  for (const [key, raw] of Object.entries(json.chats ?? {})) {
    const e = cleanEntry(raw);
    if (e) book.set(key, e);
  }
  return book;
}

async function writeBook(file: string, book: Map<string, ChatName>): Promise<void> {
  const json = JSON.stringify({ chats: Object.fromEntries([...book].sort(([a], [b]) => a.localeCompare(b))) }, null, 1);
  await withFileLock(file, () => writeFileAtomic(file, `${json}\n`));
}

/** The chats' names: what callers see (the intake notes them, the memory page reads them). */
export interface ChatNames {
  /** Reads the names kept so far (before the first `get`); an unreadable store starts empty. */
  load(): Promise<void>;
  /** The entry kept for `channel:chatId`. */
  get(key: string): ChatName | undefined;
  /**
   * Keeps what the channel said about `channel:chatId` (and a topic's group), cleaned (cleanName);
   * a name not said keeps the one seen before. Written in the background; never throws.
   */
  note(channel: string, chatId: string, label: ChatLabel | undefined): void;
  /** Waits for the writes started so far: after it, a new store's `load` finds them (shutdown, tests). */
  flush(): Promise<void>;
  /**
   * Forgets these chats' names (`channel:chatId` keys) for good (purge; also without `load`).
   * One line per thing deleted, for purge's report; none when no name of theirs was kept.
   */
  erase(keys: readonly string[]): Promise<string[]>;
  /** What moves between the modes (`npm run memory -- migrate`): the entries as stored. */
  portable(): Portable<NamedChat>;
}

/** The names as one small JSON file, rewritten whole (atomic, locked) when an entry changes. */
export class FileChatNames implements ChatNames {
  private book = new Map<string, ChatName>();
  /** The newest write; writes run one after another, each with the book as it is then. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly log: Logger,
  ) {}

  async load(): Promise<void> {
    try {
      this.book = await readBook(this.file);
    } catch (err) {
      // Only names: a missing or unreadable book starts empty and fills again as chats talk.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn({ err }, 'chat names file could not be read; names are kept again as chats talk');
    }
  }

  get(key: string): ChatName | undefined {
    return this.book.get(key);
  }

  /**
   * Keeps what the channel said about `channel:chatId` (and a topic's group); a name not said
   * keeps the one seen before. Written in the background when anything changed; a failed write
   * is logged (the next change writes the whole book again).
   */
  note(channel: string, chatId: string, label: ChatLabel | undefined): void {
    if (noteInto(this.book, channel, chatId, label).length === 0) return;
    this.writing = this.writing
      .then(() => writeBook(this.file, this.book))
      .catch((err: unknown) => this.log.warn({ err }, 'chat names could not be written; they are written again with the next change'));
  }

  /** Waits for the writes started so far (shutdown, tests). */
  flush(): Promise<void> {
    return this.writing;
  }

  /**
   * What moves between the modes: the entries on disk, as `load` reads them. (A view of its
   * own, since `load` here means reading the book.)
   */
  portable(): Portable<NamedChat> {
    const onDisk = async () => {
      await this.writing;
      return readBook(this.file).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? new Map<string, ChatName>() : Promise.reject(err)));
    };
    return {
      portableName: 'chat names',
      dump: async function* () {
        for (const [chat, e] of await onDisk()) yield { chat, ...e };
      },
      // Added to the book on disk, written once at the end.
      load: async (items) => {
        const book = await onDisk();
        let n = 0;
        for await (const { chat, ...e } of items) {
          const entry = cleanEntry(e);
          if (!entry) continue;
          book.set(chat, entry);
          n++;
        }
        await writeBook(this.file, book);
        this.book = book;
        return n;
      },
      isEmpty: async () => (await onDisk()).size === 0,
      clear: async () => {
        await this.writing;
        this.book.clear();
        await unlink(this.file).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
      },
    };
  }

  /** The entries go from the book on disk (after the writes started); an unreadable book goes whole (dropChatNames). */
  async erase(keys: readonly string[]): Promise<string[]> {
    for (const key of keys) this.book.delete(key);
    await this.writing;
    const name = path.basename(this.file);
    const dropped = await dropChatNames(this.file, keys);
    if (dropped === 'entry') return [`${keys.length > 1 ? 'their names' : 'its name'} in ${name}`];
    if (dropped === 'file') return [`${name} (unreadable, so removed whole: the other chats' names are kept again as they talk)`];
    return [];
  }
}

/**
 * Puts what the channel said about `channel:chatId` (and a topic's group) into `book`, cleaned;
 * a name not said keeps the one seen before. Returns the keys whose entry changed (none: nothing to write).
 */
export function noteInto(book: Map<string, ChatName>, channel: string, chatId: string, label: ChatLabel | undefined): string[] {
  if (!label || !KINDS.has(label.kind)) return [];
  const changed: string[] = [];
  const put = (key: string, next: ChatName) => {
    const old = book.get(key);
    const merged: ChatName = { ...next, ...(next.name === undefined && old?.name ? { name: old.name } : {}) };
    if (same(old, merged)) return;
    book.set(key, merged);
    changed.push(key);
  };
  const name = cleanName(label.name);
  const parent = label.kind === 'topic' && label.group ? chatKey({ channel, chatId: label.group.chatId }) : undefined;
  put(chatKey({ channel, chatId }), { kind: label.kind, ...(name ? { name } : {}), ...(parent ? { parent } : {}) });
  if (parent) {
    const groupName = cleanName(label.group?.name);
    put(parent, { kind: 'group', ...(groupName ? { name: groupName } : {}) });
  }
  return changed;
}

/**
 * Removes these chats' entries from the book on disk (purge, daemon stopped): 'entry' when one had
 * one; 'file' when the book could not be read (it may hold the name, so it goes whole: it is
 * only names, and fills again as chats talk); undefined when there was nothing of the chat.
 */
export async function dropChatNames(file: string, keys: readonly string[]): Promise<'entry' | 'file' | undefined> {
  let book: Map<string, ChatName>;
  try {
    book = await readBook(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    await unlink(file);
    return 'file';
  }
  let dropped = false;
  for (const key of keys) dropped = book.delete(key) || dropped;
  if (!dropped) return undefined;
  await writeBook(file, book);
  return 'entry';
}
