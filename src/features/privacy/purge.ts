/**
 * Purge: every trace of one chat, for a person who asks to be removed — its session file (and
 * any copy set aside as corrupt), its name, its lines in the session log and the inbox journal, its memory
 * folder (MEMORY.md, versions, notes, history), its rows in memory.db (memories with their
 * full-text, entity and vector entries, consolidation marks; freed space scrubbed), its
 * reminders, its token usage, its exports and, on request, its Telegram pairing. A group takes
 * every forum topic of it along (core/group.ts: `-100123` takes `-100123:7`), wherever one left a
 * trace; a topic alone is just that topic. Other chats are not touched. Runs with the daemon
 * stopped (the CLI holds the daemon lock meanwhile): a running daemon caches sessions.
 *
 * A purge is recorded before anything is deleted (`purging/`, journal.ts) and takes the
 * reminders first; one a kill cut short is finished by the next start of the daemon, or by the
 * next purge, before anything else.
 */
import { readFile, readdir, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../core/log.js';
import type { MemoryIndex } from '../../index/memory-index.js';
import { SqliteMemoryIndex } from '../../index/sqlite-memory-index.js';
import { writeFileAtomic } from '../../storage/atomic.js';
import { chatOfFileKey, sessionFileKey } from '../../storage/paths.js';
import { groupOf, isTopic } from '../../core/group.js';
import { dropChatNames } from '../../sessions/names.js';
import type { ChatRef } from './forget.js';
import { setAsideCopies } from '../../storage/sqlite.js';
import { crashPoint } from '../../core/crash-point.js';
import { MAX_ATTEMPTS, PrivacyJournal, type JournalRecord } from './journal.js';

/** A database of rows per chat that purge empties: schedules.db (reminders), usage.db (token usage). */
export interface ChatRows {
  /** Every chat (`channel:chatId`) with a row. */
  chats(): string[];
  /** Deletes the chat's rows; returns how many. */
  deleteChat(chat: string): number;
  close(): void;
}

export interface PurgeOptions {
  workspaceDir: string;
  memoryScope: 'chat' | 'global';
  /**
   * Open schedules.db and usage.db, each only when its file exists: the stores of the reminders
   * and usage features, which the caller names (a feature does not import another's).
   */
  openReminders: (file: string) => ChatRows;
  openUsage: (file: string) => ChatRows;
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
  reminders?: ChatRows;
  usage?: ChatRows;
}

async function openStores(opts: PurgeOptions): Promise<Stores> {
  const ws = opts.workspaceDir;
  const stores: Stores = {};
  const dbFile = path.join(ws, 'memory.db');
  if (opts.memoryScope === 'chat' && (await exists(dbFile))) stores.index = new SqliteMemoryIndex(dbFile, opts.log);
  const schedules = path.join(ws, 'schedules.db');
  if (await exists(schedules)) stores.reminders = opts.openReminders(schedules);
  const usageFile = path.join(ws, 'usage.db');
  if (await exists(usageFile)) stores.usage = opts.openUsage(usageFile);
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
  for (const { line } of await jsonLines(path.join(ws, 'sessions.wal.jsonl')))
    if (typeof line?.chatId === 'string') keys.add(`${line.channelType}:${line.chatId}`);
  for (const { line } of await jsonLines(path.join(ws, 'inbox.jsonl')))
    if (typeof line?.msg?.chatId === 'string') keys.add(`${line.msg.channel}:${line.msg.chatId}`);
  for (const k of stores.index?.erase?.scopes() ?? []) keys.add(k);
  for (const k of stores.reminders?.chats() ?? []) keys.add(k);
  for (const k of stores.usage?.chats() ?? []) keys.add(k);
  const prefix = `${chat.channel}:`;
  return [...keys]
    .filter((k) => k !== group && k.startsWith(prefix) && groupOf(k) === group)
    .map((k) => k.slice(prefix.length))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

/** Where purges under way are recorded (journal.ts), in the workspace. */
export const PURGING_DIR = 'purging';

/** A purge under way: its chat, the topics found with it, and whether the pairing goes too. */
interface PurgeRecord extends JournalRecord {
  topics: string[];
  pairing: boolean;
}

const purgeJournal = (opts: PurgeOptions) => new PrivacyJournal<PurgeRecord>(path.join(opts.workspaceDir, PURGING_DIR), opts.log);

/**
 * Deletes every trace of the chat (see the top of this file). Recorded first (journal.ts), so a
 * kill part-way is finished by the next start of the daemon or the next purge
 * (`finishInterruptedPurges`).
 */
export async function purgeChat(chat: ChatRef, opts: PurgeOptions): Promise<PurgeReport> {
  return purgeRecorded(chat, opts);
}

/** A purge the last run began and did not end: finished now, or given up on after `MAX_ATTEMPTS` runs. */
export interface InterruptedPurge {
  chat: string;
  report?: PurgeReport;
  givenUp?: true;
}

/**
 * Finishes the purges an earlier run began and a kill cut short; called with the daemon lock
 * held, before the daemon builds anything (and by the purge command before its own purge).
 * `revokePairing` is used only for a purge that asked for it.
 */
export async function finishInterruptedPurges(opts: PurgeOptions): Promise<InterruptedPurge[]> {
  const journal = purgeJournal(opts);
  const out: InterruptedPurge[] = [];
  for (const { id, record } of await journal.left()) {
    const chat = { channel: record.channel, chatId: record.chatId };
    const name = `${chat.channel}:${chat.chatId}`;
    if (record.attempt >= MAX_ATTEMPTS) {
      opts.log.error({ chat: name, attempt: record.attempt }, 'a purge did not finish in several runs in a row; given up: run it again');
      await journal.end(id);
      out.push({ chat: name, givenUp: true });
      continue;
    }
    opts.log.warn({ chat: name }, 'a purge was cut off by the last stop; finishing it');
    try {
      // Counted before anything is opened: a purge that kills the process anywhere is given up in time.
      const resumed = { id, record: { ...record, attempt: record.attempt + 1 } };
      await journal.update(id, resumed.record);
      const { revokePairing, ...rest } = opts;
      out.push({ chat: name, report: await purgeRecorded(chat, record.pairing ? opts : rest, resumed) });
    } catch (err) {
      // The record stays (this run counted) for the next start or purge.
      opts.log.error({ chat: name, err }, 'a purge cut off by the last stop could not be finished; tried again next time');
    }
  }
  return out;
}

/**
 * The purge itself, recorded (or, `resumed`, its record updated) once its topics are known and
 * before anything is deleted; the record goes when it is done.
 */
async function purgeRecorded(chat: ChatRef, opts: PurgeOptions, resumed?: { id: string; record: PurgeRecord }): Promise<PurgeReport> {
  const journal = purgeJournal(opts);
  const stores = await openStores(opts);
  try {
    const found = isTopic(`${chat.channel}:${chat.chatId}`) ? [] : await topicsOf(chat, opts, stores);
    // A resumed purge: the topics found when it began, and any the traces left still name.
    const topics = [...new Set([...(resumed?.record.topics ?? []), ...found])].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    let id: string;
    if (resumed) await journal.update((id = resumed.id), { ...resumed.record, topics });
    else id = await journal.begin({ ...chat, topics, pairing: opts.revokePairing !== undefined, attempt: 1 });
    crashPoint('purge:recorded');
    const chats: ChatRef[] = [chat, ...topics.map((chatId) => ({ channel: chat.channel, chatId }))];
    const report = { topics, ...(await purgeChats(chats, opts, stores)) };
    await journal.end(id);
    return report;
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

  // Reminders first: one due would post into the chat if the daemon started before the rest went.
  const reminders = stores.reminders ? [...ids].reduce((n, id) => n + stores.reminders!.deleteChat(id), 0) : 0;
  if (reminders > 0) deleted.push(`${reminders} reminder(s) in schedules.db (with their delivery records)`);

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
  crashPoint('purge:files');
  const named = await dropChatNames(path.join(ws, 'sessions.names.json'), [...ids]);
  if (named === 'entry') deleted.push(`${ids.size > 1 ? 'their names' : 'its name'} in sessions.names.json`);
  else if (named === 'file') deleted.push("sessions.names.json (unreadable, so removed whole: the other chats' names are kept again as they talk)");

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
