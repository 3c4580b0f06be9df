/**
 * Purge: every trace of one chat, for a person who asks to be removed — its session file (and
 * any copy set aside as corrupt), its name, its lines in the session log and the inbox journal, its memory
 * folder (MEMORY.md, versions, notes, history), the memory writes held from it for approval, its rows in memory.db (memories with their
 * full-text, entity and vector entries, consolidation marks; freed space scrubbed), its
 * reminders, its token usage, what /why recorded of its answers, its exports and, on request, its Telegram pairing. A group takes
 * every forum topic of it along (core/group.ts: `-100123` takes `-100123:7`), wherever one left a
 * trace; a topic alone is just that topic. Other chats are not touched. Runs with the daemon
 * stopped (the CLI holds the daemon lock meanwhile): a running daemon caches sessions.
 *
 * A purge is recorded before anything is deleted (`purging/`, journal.ts) and takes the
 * reminders first; one a kill cut short is finished by the next start of the daemon, or by the
 * next purge, before anything else.
 */
import type { Chat } from '../../core/chat.js';
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../core/log.js';
import type { MemoryIndex } from '../../index/memory-index.js';
import type { SessionStore } from '../../sessions/store.js';
import type { Inbox } from '../../queue/inbox.js';
import type { MemoryService } from '../../memory/service.js';
import type { PendingWrites } from '../../memory/pending.js';
import { chatOfFileKey, sessionFileKey } from '../../storage/paths.js';
import { WORKSPACE_FILES } from '../../storage/workspace-files.js';
import { groupOf, isTopic } from '../../core/group.js';
import { setAsideCopies } from '../../storage/sqlite.js';
import { crashPoint } from '../../core/crash-point.js';
import { MAX_ATTEMPTS, PrivacyJournal, type ChangeJournal, type JournalRecord } from './journal.js';

/** A database of rows per chat that purge empties: schedules.db (reminders), usage.db (token usage). */
export interface ChatRows {
  /** Every chat (`channel:chatId`) with a row. */
  chats(): Promise<string[]>;
  /** Deletes the chat's rows; returns how many. */
  deleteChat(chat: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * The stores purge empties, opened by the caller (the CLI, or the daemon's start before it builds
 * anything) with the daemon stopped: the session store is not `init`ed (no replay), and the
 * databases are opened only when their file exists. A feature does not import another's: the
 * reminders' and usage stores come from the caller too.
 */
export interface PurgeStores {
  sessions: Pick<SessionStore, 'traces' | 'erase' | 'names' | 'close'>;
  inbox: Pick<Inbox, 'chats' | 'erase' | 'shutdown'>;
  memory: Pick<MemoryService, 'scope' | 'chats' | 'erase'>;
  /** Memory writes held for the owner's approval (memory/pending.ts). */
  pending?: Pick<PendingWrites, 'chats' | 'erase'> | undefined;
  /** memory.db, when there is one and memory is per chat. */
  index?: MemoryIndex | undefined;
  /** schedules.db (reminders), when there is one. */
  reminders?: ChatRows | undefined;
  /** usage.db (token usage), when there is one. */
  usage?: ChatRows | undefined;
  /** What answers were built from (/why: features/why/store.ts). */
  why?: ChatRows | undefined;
}

export interface PurgeOptions {
  workspaceDir: string;
  /** Opens the stores (see PurgeStores); purge closes them when it ends. */
  openStores: () => Promise<PurgeStores>;
  /**
   * Also take back the chat's pairing, where its channel pairs users (Telegram: its user id is
   * the chat id of a private chat): the caller's revoke, as the pairing store belongs to the
   * channel, a layer above. It says what it deleted, or what it kept and why, in a report line.
   */
  revokePairing?: (chat: Chat) => Promise<{ deleted: string } | { kept: string }>;
  /** Where purges under way are recorded (app/stores.ts: PostgreSQL with DATABASE_URL); by default `purging/` in the workspace. */
  journal?: ChangeJournal<PurgeRecord>;
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

/** A chat's exports (`exports/{chat}/`): the privacy feature's own folder (export-command.ts). */
const exportsDir = (ws: string, key?: string): string => path.join(ws, WORKSPACE_FILES.exports, ...(key ? [key] : []));

/**
 * The chat ids of the group's forum topics that left anything in the workspace: a session or
 * memory or export folder, a line of the session log or the journal, memory.db rows, reminders,
 * token usage. Every candidate is judged by `groupOf`, the one reading of a topic's id.
 */
async function topicsOf(chat: Chat, opts: PurgeOptions, stores: PurgeStores): Promise<string[]> {
  const group = `${chat.channel}:${chat.chatId}`;
  const keys = new Set<string>();
  const add = (c: Chat | undefined) => c && keys.add(`${c.channel}:${c.chatId}`);
  for (const c of await stores.sessions.traces()) add(c);
  for (const c of await stores.memory.chats()) add(c);
  for (const name of await readdir(exportsDir(opts.workspaceDir)).catch(() => [] as string[])) add(chatOfFileKey(name));
  for (const c of await stores.inbox.chats()) add(c);
  for (const k of stores.index?.erase?.scopes() ?? []) keys.add(k);
  for (const k of (await stores.reminders?.chats()) ?? []) keys.add(k);
  for (const k of (await stores.usage?.chats()) ?? []) keys.add(k);
  for (const k of (await stores.pending?.chats()) ?? []) keys.add(k);
  const prefix = `${chat.channel}:`;
  return [...keys]
    .filter((k) => k !== group && k.startsWith(prefix) && groupOf(k) === group)
    .map((k) => k.slice(prefix.length))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

/** Where purges under way are recorded (journal.ts), in the workspace. */
export const PURGING_DIR = WORKSPACE_FILES.purging;

/** A purge under way: its chat, the topics found with it, and whether the pairing goes too. */
export interface PurgeRecord extends JournalRecord {
  topics: string[];
  pairing: boolean;
}

const purgeJournal = (opts: PurgeOptions): ChangeJournal<PurgeRecord> =>
  opts.journal ?? new PrivacyJournal<PurgeRecord>(path.join(opts.workspaceDir, PURGING_DIR), opts.log);

/**
 * Deletes every trace of the chat (see the top of this file). Recorded first (journal.ts), so a
 * kill part-way is finished by the next start of the daemon or the next purge
 * (`finishInterruptedPurges`).
 */
export async function purgeChat(chat: Chat, opts: PurgeOptions): Promise<PurgeReport> {
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
async function purgeRecorded(chat: Chat, opts: PurgeOptions, resumed?: { id: string; record: PurgeRecord }): Promise<PurgeReport> {
  const journal = purgeJournal(opts);
  const stores = await opts.openStores();
  try {
    const found = isTopic(`${chat.channel}:${chat.chatId}`) ? [] : await topicsOf(chat, opts, stores);
    // A resumed purge: the topics found when it began, and any the traces left still name.
    const topics = [...new Set([...(resumed?.record.topics ?? []), ...found])].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    let id: string;
    if (resumed) await journal.update((id = resumed.id), { ...resumed.record, topics });
    else id = await journal.begin({ ...chat, topics, pairing: opts.revokePairing !== undefined, attempt: 1 });
    crashPoint('purge:recorded');
    const chats: Chat[] = [chat, ...topics.map((chatId) => ({ channel: chat.channel, chatId }))];
    const report = { topics, ...(await purgeChats(chats, opts, stores)) };
    await journal.end(id);
    return report;
  } finally {
    stores.index?.close();
    await stores.reminders?.close();
    await stores.usage?.close();
    await stores.why?.close();
    await stores.sessions.close();
    await stores.inbox.shutdown();
  }
}

/** The rows of these chats deleted from one of the ChatRows stores (none when it is not there); how many. */
async function deleteChats(rows: ChatRows | undefined, ids: Set<string>): Promise<number> {
  let n = 0;
  for (const id of ids) n += (await rows?.deleteChat(id)) ?? 0;
  return n;
}

/** Deletes everything of these chats (a chat, or a group and its topics): each file rewritten once. */
async function purgeChats(chats: Chat[], opts: PurgeOptions, stores: PurgeStores): Promise<Omit<PurgeReport, 'topics'>> {
  const ws = opts.workspaceDir;
  const ids = new Set(chats.map((c) => `${c.channel}:${c.chatId}`));
  const deleted: string[] = [];
  const kept: string[] = [];

  // Reminders first: one due would post into the chat if the daemon started before the rest went.
  const reminders = await deleteChats(stores.reminders, ids);
  if (reminders > 0) deleted.push(`${reminders} reminder(s) in schedules.db (with their delivery records)`);

  deleted.push(...(await stores.sessions.erase(chats)));
  deleted.push(...(await stores.inbox.erase(chats)));
  crashPoint('purge:files');
  deleted.push(...(await stores.sessions.names.erase([...ids])));

  for (const c of chats) {
    deleted.push(...(await stores.memory.erase(c.channel, c.chatId)));
    const held = (await stores.pending?.erase(c.channel, c.chatId)) ?? 0;
    if (held > 0) deleted.push(`${held} memory write(s) held for approval (${c.channel}:${c.chatId})`);
    const key = sessionFileKey(c.channel, c.chatId);
    if (await exists(exportsDir(ws, key))) {
      await rm(exportsDir(ws, key), { recursive: true, force: true });
      deleted.push(`exports exports/${key}/`);
    }
  }
  if (stores.memory.scope === 'global') kept.push('memory/ (MEMORY_SCOPE=global: one memory shared by every chat; edit it by hand or use /forget)');

  if (stores.index) {
    const erase = stores.index.erase;
    if (!erase) kept.push(`memory.db rows (the index could not be opened: ${stores.index.disabledReason}); run purge again once it opens`);
    else {
      let memories = 0;
      for (const id of ids) memories += erase.scope(id).memories;
      erase.scrub();
      // With DATABASE_URL the index is a cache of the database's rows: the deletes are written there before the purge is called done.
      await stores.index.persisted();
      deleted.push(`${memories} memories in memory.db (with their full-text, entity and vector entries; freed space scrubbed)`);
    }
  }
  const usage = await deleteChats(stores.usage, ids);
  if (usage > 0) deleted.push(`${usage} row(s) of token usage in usage.db`);
  const why = await deleteChats(stores.why, ids);
  if (why > 0) deleted.push(`${why} record(s) of what answers were built from (why/)`);

  const [chat] = chats;
  if (opts.revokePairing && chat) {
    const r = await opts.revokePairing(chat);
    if ('deleted' in r) deleted.push(r.deleted);
    else kept.push(r.kept);
  }
  // A damaged database set aside is never opened again, so its rows cannot be picked out.
  for (const copy of setAsideCopies(ws)) kept.push(`${copy} (a damaged database set aside: it may hold this chat's words; delete it)`);
  return { deleted, kept };
}
