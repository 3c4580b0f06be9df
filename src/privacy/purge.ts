/**
 * Purge: every trace of one chat, for a person who asks to be removed — its session file (and
 * any copy set aside as corrupt), its name, its lines in the session log and the inbox journal, its memory
 * folder (MEMORY.md, versions, notes, history), its rows in memory.db (memories with their
 * full-text, entity and vector entries, consolidation marks; freed space scrubbed), its exports
 * and, on request, its Telegram pairing. Other chats are not touched. Runs with the daemon
 * stopped (the CLI holds the daemon lock meanwhile): a running daemon caches sessions.
 */
import { readFile, readdir, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../core/log.js';
import { MemoryIndex } from '../index/memory-index.js';
import { writeFileAtomic } from '../storage/atomic.js';
import { sessionFileKey } from '../storage/paths.js';
import { dropChatName } from '../sessions/names.js';
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

/** Drops the lines `mine` accepts from a JSON-lines file (atomic rewrite); returns how many. */
async function dropLines(file: string, mine: (line: any) => boolean): Promise<number> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return 0;
  }
  let dropped = 0;
  const kept = text.split('\n').filter((raw) => {
    if (!raw.trim()) return true;
    try {
      if (!mine(JSON.parse(raw))) return true;
    } catch {
      return true;
    }
    dropped++;
    return false;
  });
  if (dropped > 0) await writeFileAtomic(file, kept.join('\n'));
  return dropped;
}

export async function purgeChat(chat: ChatRef, opts: PurgeOptions): Promise<PurgeReport> {
  const ws = opts.workspaceDir;
  const key = sessionFileKey(chat.channel, chat.chatId);
  const id = `${chat.channel}:${chat.chatId}`;
  const deleted: string[] = [];
  const kept: string[] = [];

  const sessionsDir = path.join(ws, 'sessions');
  for (const name of await readdir(sessionsDir).catch(() => [] as string[])) {
    if (name === `${key}.json` || name.startsWith(`${key}.json.corrupt-`)) {
      await unlink(path.join(sessionsDir, name));
      deleted.push(`session file sessions/${name}`);
    }
  }
  const walLines = await dropLines(path.join(ws, 'sessions.wal.jsonl'), (l) => l?.channelType === chat.channel && l?.chatId === chat.chatId);
  if (walLines > 0) deleted.push(`${walLines} line(s) of the session log sessions.wal.jsonl`);
  // Journal entries are an "in" line with the message and "start"/"done" lines by id.
  const ids = new Set<string>();
  const inboxFile = path.join(ws, 'inbox.jsonl');
  const inboxLines = await dropLines(inboxFile, (l) => {
    if (l?.t === 'in' && l.msg?.channel === chat.channel && l.msg?.chatId === chat.chatId) {
      ids.add(l.id);
      return true;
    }
    return typeof l?.id === 'string' && ids.has(l.id);
  });
  if (inboxLines > 0) deleted.push(`${inboxLines} line(s) of the inbox journal inbox.jsonl`);
  const named = await dropChatName(path.join(ws, 'sessions.names.json'), id);
  if (named === 'entry') deleted.push('its name in sessions.names.json');
  else if (named === 'file') deleted.push('sessions.names.json (unreadable, so removed whole: the other chats\' names are kept again as they talk)');

  if (opts.memoryScope === 'chat') {
    const dir = path.join(ws, 'memory', key);
    if (await exists(dir)) {
      const files = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
      await rm(dir, { recursive: true, force: true });
      deleted.push(`memory folder memory/${key}/ (${files.length} entries: MEMORY.md, versions, notes, history)`);
    }
  } else {
    kept.push('memory/ (MEMORY_SCOPE=global: one memory shared by every chat; edit it by hand or use /forget)');
  }

  const exportsDir = path.join(ws, 'exports', key);
  if (await exists(exportsDir)) {
    await rm(exportsDir, { recursive: true, force: true });
    deleted.push(`exports exports/${key}/`);
  }

  const dbFile = path.join(ws, 'memory.db');
  if (opts.memoryScope === 'chat' && (await exists(dbFile))) {
    const index = new MemoryIndex(dbFile, opts.log);
    try {
      const erase = index.erase;
      if (!erase) kept.push(`memory.db rows (the index could not be opened: ${index.disabledReason}); run purge again once it opens`);
      else {
        const { memories } = erase.scope(id);
        erase.scrub();
        deleted.push(`${memories} memories in memory.db (with their full-text, entity and vector entries; freed space scrubbed)`);
      }
    } finally {
      index.close();
    }
  }

  const schedules = path.join(ws, 'schedules.db');
  if (await exists(schedules)) {
    const store = new ReminderStore(schedules, opts.log);
    try {
      const n = store.deleteChat(id);
      if (n > 0) deleted.push(`${n} reminder(s) in schedules.db (with their delivery records)`);
    } finally {
      store.close();
    }
  }

  const usageFile = path.join(ws, 'usage.db');
  if (await exists(usageFile)) {
    const usage = new UsageStore(usageFile, 'UTC', { log: opts.log });
    try {
      const n = usage.deleteChat(id);
      if (n > 0) deleted.push(`${n} row(s) of token usage in usage.db`);
    } finally {
      usage.close();
    }
  }

  if (opts.revokePairing) {
    if (chat.channel !== 'telegram') kept.push('pairing (only Telegram chats are paired)');
    else if (await opts.revokePairing(chat.chatId)) deleted.push(`Telegram pairing of user ${chat.chatId}`);
    else kept.push(`pairing: no approval or pending code for user ${chat.chatId}`);
  }
  // A damaged database set aside is never opened again, so its rows cannot be picked out.
  for (const copy of setAsideCopies(ws)) kept.push(`${copy} (a damaged database set aside: it may hold this chat's words; delete it)`);
  return { deleted, kept };
}
