/**
 * FileSessionStore's side of a move between files and PostgreSQL (storage/portable.ts, items:
 * portable.ts): each session file's text exactly, each copy set aside as corrupt, each line of
 * the session log. Loaded items are written as the store writes its files (atomic), under the
 * names the store gives their chats, so a round trip gives the same files byte for byte.
 */
import { lstat, readFile, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { ensureDir, writeFileAtomic } from '../storage/atomic.js';
import type { Chat } from '../core/chat.js';
import { asideAt, logLineOf, type SessionItem } from './portable.js';
import { parseLogLine, type SessionWal } from './wal.js';

/** What the move needs of the store. */
export interface SessionFiles {
  dir: string;
  wal: SessionWal;
  fileFor(channel: string, chatId: string): string;
  /** The chat a file of the folder belongs to (read from a hashed name's file); undefined when it cannot be told. */
  chatOf(name: string, read: boolean): Promise<Chat | undefined>;
}

const ASIDE = /\.json\.corrupt-(\d+)$/;

/** The store's files: sessions and copies set aside (in name order), then the log's lines in their order. */
export async function* dumpSessionFiles(f: SessionFiles): AsyncIterable<SessionItem> {
  for (const name of (await readdir(f.dir).catch(() => [] as string[])).sort()) {
    if (name.startsWith('.')) continue;
    const aside = ASIDE.exec(name);
    if (!aside && !name.endsWith('.json')) continue;
    const file = path.join(f.dir, name);
    if (!(await lstat(file).catch(() => null))?.isFile()) continue;
    const chat = await f.chatOf(name, !aside);
    if (!chat) continue;
    const text = await readFile(file, 'utf8');
    yield aside
      ? { kind: 'damaged', channel: chat.channel, chatId: chat.chatId, at: aside[1]!, text }
      : { kind: 'session', channel: chat.channel, chatId: chat.chatId, text };
  }
  for (const raw of (await readFile(f.wal.file, 'utf8').catch(() => '')).split('\n')) {
    const line = parseLogLine(raw);
    if (line && !('base' in line)) yield { kind: 'log', channel: line.channelType, chatId: line.chatId, text: raw };
  }
}

/** Writes the items as the store's files; the log's lines in one replace of the log. */
export async function loadSessionFiles(f: SessionFiles, items: AsyncIterable<SessionItem>): Promise<number> {
  await ensureDir(f.dir);
  const lines: string[] = [];
  let count = 0;
  for await (const item of items) {
    count++;
    if (item.kind === 'log') {
      if (logLineOf(item)) lines.push(item.text);
      continue;
    }
    const file = f.fileFor(item.channel, item.chatId);
    await writeFileAtomic(item.kind === 'session' ? file : `${file}.corrupt-${asideAt(item)}`, item.text);
  }
  if (lines.length > 0) await f.wal.replace(`${lines.join('\n')}\n`);
  return count;
}

/** The folder's session files and copies set aside. */
async function sessionFiles(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).filter((n) => !n.startsWith('.') && (n.endsWith('.json') || ASIDE.test(n)));
}

export async function sessionFilesEmpty(f: SessionFiles): Promise<boolean> {
  if ((await sessionFiles(f.dir)).length > 0) return false;
  const text = await readFile(f.wal.file, 'utf8').catch(() => '');
  return !text.split('\n').some((raw) => {
    const line = parseLogLine(raw);
    return line !== undefined && !('base' in line);
  });
}

/** Deletes the session files, the copies set aside and the log's lines (its numbering is kept). */
export async function clearSessionFiles(f: SessionFiles): Promise<void> {
  for (const name of await sessionFiles(f.dir)) await unlink(path.join(f.dir, name));
  await f.wal.empty();
}
