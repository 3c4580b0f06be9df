/**
 * Every name the daemon gives a file or folder of `WORKSPACE_DIR`, in one table. A store's file
 * implementation and whoever must find its files (purge, the memory page's sizes) take the name
 * from here, so renaming one is one line and a list of "everything kept" cannot miss one.
 * Per-chat folders below `memory/` and `sessions/` are named by their store (storage/paths.ts).
 */
export const WORKSPACE_FILES = {
  /** One JSON file per chat (sessions/file-store.ts). */
  sessions: 'sessions',
  /** The session stores' write-ahead log, beside the folder. */
  sessionLog: 'sessions.wal.jsonl',
  /** The chats' names as last seen (sessions/names.ts). */
  chatNames: 'sessions.names.json',
  /** MEMORY.md, daily notes, history and versions, per chat (memory/file-memory.ts). */
  memory: 'memory',
  /** Memory writes held for the owner's approval (memory/pending-file.ts). */
  pendingWrites: 'memory-pending.json',
  /** The SQLite index (index/sqlite-memory-index.ts). */
  memoryIndex: 'memory.db',
  /** With DATABASE_URL: the index's local cache, rebuilt from the database when missing (index/pg/). */
  memoryIndexCache: 'memory.cache.db',
  /** Reminders (features/reminders/sqlite-store.ts). */
  reminders: 'schedules.db',
  /** Tokens per chat per day (features/usage/sqlite-usage.ts). */
  usage: 'usage.db',
  /** The intake journal (queue/file-inbox.ts). */
  inbox: 'inbox.jsonl',
  /** Runtime settings (config/runtime.ts), in their folder. */
  preferences: 'preferences',
  runtimeConfig: 'runtime-config.json',
  /** Forgets and purges under way, finished at the next start (features/privacy/journal.ts). */
  forgetting: 'forgetting',
  purging: 'purging',
  /** What each of a chat's last answers was built from, for /why (features/why/store.ts). */
  why: 'why',
  /** /export's files on channels that cannot send one. */
  exports: 'exports',
  /** The persona and instructions the owner may write (features/prompt/instructions.ts). */
  instructions: 'SYSTEM.md',
  /** The memory page's token when MEMORY_PAGE_TOKEN is unset (web/token.ts). */
  memoryPageToken: '.memory-page-token',
  /** The running daemon's process id (storage/daemon-lock.ts). */
  daemonPid: 'daemon.pid',
} as const;

export type WorkspaceFile = keyof typeof WORKSPACE_FILES;
