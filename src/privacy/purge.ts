/**
 * Purge: every trace of one chat, for a person who asks to be removed — its session file (and
 * any copy set aside as corrupt), its name, its lines in the session log and the inbox journal, its memory
 * folder (MEMORY.md, versions, notes, history), its rows in memory.db (memories with their
 * full-text, entity and vector entries, consolidation marks; freed space scrubbed), its
 * reminders, its token usage, its exports and, on request, its Telegram pairing. A group takes
 * every forum topic of it along (core/group.ts: `-100123` takes `-100123:7`), wherever one left a
 * trace; a topic alone is just that topic. Other chats are not touched. Runs with the daemon
 * stopped (the CLI holds the daemon lock meanwhile): a running daemon caches sessions.
 */
import { readFile, readdir, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../core/log.js';
import { MemoryIndex } from '../index/memory-index.js';
import { writeFileAtomic } from '../storage/atomic.js';
import { chatOfFileKey, sessionFileKey } from '../storage/paths.js';
import { groupOf, isTopic } from '../core/group.js';
import { dropChatNames } from '../sessions/names.js';
import type { ChatRef } from './forget.js';
import { ReminderStore } from '../reminders/store.js';
import { UsageStore } from '../usage/usage.js';
import { setAsideCopies } from '../storage/sqlite.js';

export interface PurgeOptions {
  workspaceDir: string;
  memoryScope: 'chat' | 'global';
  /**
   * Also take back the chat's Telegram pairing (its user id is the chat id of a private chat):
   * the caller's revoke (the pairing store belongs to the Telegram channel, a layer above);
   * true when there was an approval or a pending code to take back.
   */
  revokePairing?: (userId: string) => Promise<boolean>;
  log: Logger;
}

export interface PurgeReport {
  /** The forum topics taken with a group (their chat ids), found in any of the places below. */
  topics: string[];
  /** One line per thing deleted, for the CLI to print. */
  deleted: string[];
  /** What was deliberately left (shared memory with MEMORY_SCOPE=global, an index that is off). */
  kept: string[];
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

/** The parsed lines of a JSON-lines file (unreadable lines left out); none when it is missing. */
async function jsonLines(file: string): Promise<{ raw: string; line: any }[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').map((raw) => {
    try {
      return { raw, line: raw.trim() ? JSON.parse(raw) : undefined };
    } catch {
      return { raw, line: undefined };
    }
  });
}

/** Drops the lines `mine` accepts from a JSON-lines file (atomic rewrite); returns how many. */
async function dropLines(file: string, mine: (line: any) => boolean): Promise<number> {
  const lines = await jsonLines(file);
  const kept = lines.filter((l) => l.line === undefined || !mine(l.line));
  const dropped = lines.length - kept.length;
  if (dropped > 0) await writeFileAtomic(file, kept.map((l) => l.raw).join('\n'));
  return dropped;
}

/** The workspace's databases purge works on (those that exist), opened once. */
interface Stores {
  index?: MemoryIndex;
  reminders?: ReminderStore;
  usage?: UsageStore;
}

async function openStores(opts: PurgeOptions): Promise<Stores> {
  const ws = opts.workspaceDir;
  const stores: Stores = {};
  const dbFile = path.join(ws, 'memory.db');
  if (opts.memoryScope === 'chat' && (await exists(dbFile))) stores.index = new MemoryIndex(dbFile, opts.log);
  const schedules = path.join(ws, 'schedules.db');
  if (await exists(schedules)) stores.reminders = new ReminderStore(schedules, opts.log);
  const usageFile = path.join(ws, 'usage.db');
  if (await exists(usageFile)) stores.usage = new UsageStore(usageFile, 'UTC', { log: opts.log });
  return stores;
}

/**
 * The chat ids of the group's forum topics that left anything in the workspace: a session or
 * memory or export folder, a line of the session log or the journal, memory.db rows, reminders,
 * token usage. Every candidate is judged by `groupOf`, the one reading of a topic's id.
 */
async function topicsOf(chat: ChatRef, opts: PurgeOptions, stores: Stores): Promise<string[]> {
  const ws = opts.workspaceDir;
  const group = `${chat.channel}:${chat.chatId}`;
  const keys = new Set<string>();
  const addFileKey = (name: string) => {
    const c = chatOfFileKey(name);
    if (c) keys.add(`${c.channel}:${c.chatId}`);
  };
  for (const name of await readdir(path.join(ws, 'sessions')).catch(() => [] as string[])) addFileKey(name.replace(/\.json(\.corrupt-.*)?$/, ''));
  for (const dir of ['memory', 'exports']) for (const name of await readdir(path.join(ws, dir)).catch(() => [] as string[])) addFileKey(name);
  for (const { line } of await jsonLines(path.join(ws, 'sessions.wal.jsonl'))) if (typeof line?.chatId === 'string') keys.add(`${line.channelType}:${line.chatId}`);
  for (const { line } of await jsonLines(path.join(ws, 'inbox.jsonl'))) if (typeof line?.msg?.chatId === 'string') keys.add(`${line.msg.channel}:${line.msg.chatId}`);
  for (const k of stores.index?.erase?.scopes() ?? []) keys.add(k);
  for (const k of stores.reminders?.chats() ?? []) keys.add(k);
  for (const k of stores.usage?.chats() ?? []) keys.add(k);
  const prefix = `${chat.channel}:`;
  return [...keys].filter((k) => k !== group && k.startsWith(prefix) && groupOf(k) === group).map((k) => k.slice(prefix.length)).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

export async function purgeChat(chat: ChatRef, opts: PurgeOptions): Promise<PurgeReport> {
  const stores = await openStores(opts);
  try {
    const topics = isTopic(`${chat.channel}:${chat.chatId}`) ? [] : await topicsOf(chat, opts, stores);
    const chats: ChatRef[] = [chat, ...topics.map((chatId) => ({ channel: chat.channel, chatId }))];
    return { topics, ...(await purgeChats(chats, opts, stores)) };
  } finally {
    stores.index?.close();
    stores.reminders?.close();
    stores.usage?.close();
  }
}

/** Deletes everything of these chats (a chat, or a group and its topics): each file rewritten once. */
async function purgeChats(chats: ChatRef[], opts: PurgeOptions, stores: Stores): Promise<Omit<PurgeReport, 'topics'>> {
  const ws = opts.workspaceDir;
  const ids = new Set(chats.map((c) => `${c.channel}:${c.chatId}`));
  const fileKeys = chats.map((c) => sessionFileKey(c.channel, c.chatId));
  const deleted: string[] = [];
  const kept: string[] = [];

  const sessionsDir = path.join(ws, 'sessions');
  for (const name of await readdir(sessionsDir).catch(() => [] as string[])) {
    if (fileKeys.some((key) => name === `${key}.json` || name.startsWith(`${key}.json.corrupt-`))) {
      await unlink(path.join(sessionsDir, name));
      deleted.push(`session file sessions/${name}`);
    }
  }
  const walLines = await dropLines(path.join(ws, 'sessions.wal.jsonl'), (l) => ids.has(`${l?.channelType}:${l?.chatId}`));
  if (walLines > 0) deleted.push(`${walLines} line(s) of the session log sessions.wal.jsonl`);
  // Journal entries are an "in" line with the message and "start"/"done" lines by id.
  const entries = new Set<string>();
  const inboxLines = await dropLines(path.join(ws, 'inbox.jsonl'), (l) => {
    if (l?.t === 'in' && ids.has(`${l.msg?.channel}:${l.msg?.chatId}`)) {
      entries.add(l.id);
      return true;
    }
    return typeof l?.id === 'string' && entries.has(l.id);
  });
  if (inboxLines > 0) deleted.push(`${inboxLines} line(s) of the inbox journal inbox.jsonl`);
  const named = await dropChatNames(path.join(ws, 'sessions.names.json'), [...ids]);
  if (named === 'entry') deleted.push(`${ids.size > 1 ? 'their names' : 'its name'} in sessions.names.json`);
  else if (named === 'file') deleted.push('sessions.names.json (unreadable, so removed whole: the other chats\' names are kept again as they talk)');

  for (const key of fileKeys) {
    const dir = path.join(ws, 'memory', key);
    if (opts.memoryScope === 'chat' && (await exists(dir))) {
      const files = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
      await rm(dir, { recursive: true, force: true });
      deleted.push(`memory folder memory/${key}/ (${files.length} entries: MEMORY.md, versions, notes, history)`);
    }
    const exportsDir = path.join(ws, 'exports', key);
    if (await exists(exportsDir)) {
      await rm(exportsDir, { recursive: true, force: true });
      deleted.push(`exports exports/${key}/`);
    }
  }
  if (opts.memoryScope === 'global') kept.push('memory/ (MEMORY_SCOPE=global: one memory shared by every chat; edit it by hand or use /forget)');

  if (stores.index) {
    const erase = stores.index.erase;
    if (!erase) kept.push(`memory.db rows (the index could not be opened: ${stores.index.disabledReason}); run purge again once it opens`);
    else {
      let memories = 0;
      for (const id of ids) memories += erase.scope(id).memories;
      erase.scrub();
      deleted.push(`${memories} memories in memory.db (with their full-text, entity and vector entries; freed space scrubbed)`);
    }
  }
  const reminders = stores.reminders ? [...ids].reduce((n, id) => n + stores.reminders!.deleteChat(id), 0) : 0;
  if (reminders > 0) deleted.push(`${reminders} reminder(s) in schedules.db (with their delivery records)`);
  const usage = stores.usage ? [...ids].reduce((n, id) => n + stores.usage!.deleteChat(id), 0) : 0;
  if (usage > 0) deleted.push(`${usage} row(s) of token usage in usage.db`);

  const [chat] = chats;
  if (opts.revokePairing && chat) {
    if (chat.channel !== 'telegram') kept.push('pairing (only Telegram chats are paired)');
    else if (await opts.revokePairing(chat.chatId)) deleted.push(`Telegram pairing of user ${chat.chatId}`);
    else kept.push(`pairing: no approval or pending code for user ${chat.chatId}`);
  }
  // A damaged database set aside is never opened again, so its rows cannot be picked out.
  for (const copy of setAsideCopies(ws)) kept.push(`${copy} (a damaged database set aside: it may hold this chat's words; delete it)`);
  return { deleted, kept };
}
