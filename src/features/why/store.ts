/**
 * Where `/why` records live (record.ts): the last KEEP_PER_CHAT answers of each chat. Two
 * implementations pass one contract (test/features/why/store.contract.ts): files in the
 * workspace (FileWhyStore, here) and PostgreSQL (store-pg.ts); app/stores.ts chooses.
 *
 * Files: `why/<chat>.json` per chat, the chat's records oldest first, rewritten whole (locked,
 * temp + fsync + rename) on each change, so a forget leaves no copy of the words behind.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { ensureDir, withFileLock, writeFileAtomic } from '../../storage/atomic.js';
import { chatOfFileKey, sessionFileKey } from '../../storage/paths.js';
import type { Portable } from '../../storage/portable.js';
import { WORKSPACE_FILES } from '../../storage/workspace-files.js';
import { KEEP_PER_CHAT, toWhyRecord, withoutMatching, type WhyRecord } from './record.js';

export interface WhyStore extends Portable<WhyRecord> {
  /** Keeps the record; the chat's oldest beyond KEEP_PER_CHAT go. */
  add(record: WhyRecord): Promise<void>;
  /** The chat's newest record. */
  last(chat: string): Promise<WhyRecord | undefined>;
  /** The chat's record whose answer went out as this message (its channel id), or of this turn. */
  find(chat: string, by: { sent: string } | { turn: string }): Promise<WhyRecord | undefined>;
  /** `/forget`: every item whose text (or id) `test` matches is removed; how many. */
  forget(chat: string, test: (text: string) => boolean): Promise<number>;
  /** Every chat with a record (purge). */
  chats(): Promise<string[]>;
  /** Purge: the chat's records go; how many. */
  deleteChat(chat: string): Promise<number>;
  close(): Promise<void>;
}

/** The chat's record that matches `by`, newest first. */
export function pick(records: WhyRecord[], by: { sent: string } | { turn: string }): WhyRecord | undefined {
  return [...records].reverse().find((r) => ('sent' in by ? r.sent.includes(by.sent) : r.turn === by.turn));
}

/** A chat key as `channel:chatId` (the form records carry). */
function chatParts(chat: string): { channel: string; chatId: string } {
  const at = chat.indexOf(':');
  return { channel: chat.slice(0, at), chatId: chat.slice(at + 1) };
}

export class FileWhyStore implements WhyStore {
  readonly portableName = 'why records';

  constructor(private readonly dir: string) {}

  static inWorkspace(workspaceDir: string): FileWhyStore {
    return new FileWhyStore(path.join(workspaceDir, WORKSPACE_FILES.why));
  }

  private fileOf(chat: string): string {
    const { channel, chatId } = chatParts(chat);
    return path.join(this.dir, `${sessionFileKey(channel, chatId)}.json`);
  }

  private async read(file: string): Promise<WhyRecord[]> {
    let raw: string;
    try {
      raw = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    try {
      const list: unknown = JSON.parse(raw);
      return Array.isArray(list) ? list.flatMap((v) => toWhyRecord(v) ?? []) : [];
    } catch {
      // A damaged file explains nothing: /why says it has no record, and the next answer replaces it.
      return [];
    }
  }

  /** Read, changed and written back under the chat file's lock; an empty list removes the file. */
  private async change<T>(chat: string, fn: (records: WhyRecord[]) => { records: WhyRecord[]; result: T; changed: boolean }): Promise<T> {
    const file = this.fileOf(chat);
    await ensureDir(this.dir);
    return withFileLock(file, async () => {
      const { records, result, changed } = fn(await this.read(file));
      if (!changed) return result;
      if (records.length === 0) await rm(file, { force: true });
      else await writeFileAtomic(file, JSON.stringify(records));
      return result;
    });
  }

  add(record: WhyRecord): Promise<void> {
    return this.change(record.chat, (records) => ({
      records: [...records.filter((r) => r.turn !== record.turn), record].slice(-KEEP_PER_CHAT),
      result: undefined,
      changed: true,
    }));
  }

  async last(chat: string): Promise<WhyRecord | undefined> {
    return (await this.read(this.fileOf(chat))).at(-1);
  }

  async find(chat: string, by: { sent: string } | { turn: string }): Promise<WhyRecord | undefined> {
    return pick(await this.read(this.fileOf(chat)), by);
  }

  forget(chat: string, test: (text: string) => boolean): Promise<number> {
    return this.change(chat, (records) => {
      let removed = 0;
      const next = records.map((r) => {
        const left = withoutMatching(r, test);
        if (!left) return r;
        removed += r.items.length - left.items.length;
        return left;
      });
      return { records: next, result: removed, changed: removed > 0 };
    });
  }

  async chats(): Promise<string[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    return names.flatMap((n) => {
      const c = n.endsWith('.json') ? chatOfFileKey(n.slice(0, -5)) : undefined;
      return c ? [`${c.channel}:${c.chatId}`] : [];
    });
  }

  deleteChat(chat: string): Promise<number> {
    return this.change(chat, (records) => ({ records: [], result: records.length, changed: records.length > 0 }));
  }

  async close(): Promise<void> {}

  async *dump(): AsyncIterable<WhyRecord> {
    for (const chat of (await this.chats()).sort()) yield* await this.read(this.fileOf(chat));
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
    return (await this.chats()).length === 0;
  }

  async clear(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
