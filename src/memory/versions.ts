/**
 * Versions of one scope's MEMORY.md: each version is the file's full text, when it was made,
 * what made it and how many entries it added and removed. Every change of MEMORY.md goes
 * through MemoryFiles, which records the text it replaces first — so the previous text is
 * always kept (also a hand edit made between two changes: it is kept as its own version
 * first). The last MAX_VERSIONS are kept.
 *
 * `undo` and `restore` write an older text back as a new version, so they can be undone too.
 * `redact` removes lines from every stored version (used by /forget). The refusal counter of
 * the rewrite guard is kept with them, so /status shows it across restarts.
 *
 * Callers see the `MemoryVersions` interface; today's implementation keeps them in the memory
 * folder's `versions/` (file-versions.ts). What any implementation must do is part of the memory
 * contract: test/memory/service.contract.ts.
 */

export const MAX_VERSIONS = 50;

export interface VersionInfo {
  n: number;
  /** ISO time the version was made. */
  at: string;
  /** What made it: consolidation, compression, tool memory_rewrite, tool memory_add, undo, restore, forget, hand edit, … */
  source: string;
  /** Entries added / removed compared with the version before it. */
  added: number;
  removed: number;
  bytes: number;
  /** For undo: the version whose change it took back. */
  undoes?: number;
}

export interface RefusalInfo {
  at: string;
  source: string;
  prior: number;
  dropped: number;
}

/** The rewrite guard's refusals of one scope. */
export interface Refusals {
  count: number;
  last?: RefusalInfo;
}

export interface MemoryVersions {
  /** Newest first; at most MAX_VERSIONS. */
  list(): Promise<VersionInfo[]>;
  /** Version `n`'s text; undefined when it is not kept (never made, or dropped as one of the oldest). */
  read(n: number): Promise<string | undefined>;
  /** Rewrites the guard refused (guard.ts), counted across restarts for /status. */
  refusals(): Promise<Refusals>;
  noteRefusal(r: RefusalInfo): Promise<void>;
  /**
   * What `/memory undo` restores: the text before the newest change not yet undone (undos
   * themselves are skipped, so repeated undos walk further back).
   */
  undoTarget(): Promise<{ change: VersionInfo; restore: VersionInfo } | undefined>;
  /** Removes every line for which `drop` is true from every kept version (/forget); returns how many went. */
  redact(drop: (line: string) => boolean): Promise<number>;
}

/** What undo/restore did, for the command's reply. */
export type RevertResult = { ok: true; version: VersionInfo; restored: VersionInfo; undid?: VersionInfo } | { ok: false; reason: string };

/** What undo and restore need of a chat's memory files (MemoryFiles has it; not imported: it imports this module). */
export interface VersionedMemory {
  versions: MemoryVersions;
  changeMemory(source: string, change: (current: string) => string | null): Promise<boolean>;
}

/**
 * Takes back the newest change of MEMORY.md not yet undone, as a new version (`undo #n`).
 * Repeated undos walk further back.
 */
export async function undoMemory(files: VersionedMemory): Promise<RevertResult> {
  const target = await files.versions.undoTarget();
  if (!target) return { ok: false, reason: 'There is no earlier version of MEMORY.md to go back to.' };
  const text = await files.versions.read(target.restore.n);
  if (text === undefined) return { ok: false, reason: `Version #${target.restore.n} could not be read.` };
  const changed = await files.changeMemory(`undo #${target.change.n}`, () => text);
  if (!changed) return { ok: false, reason: 'MEMORY.md already has the text of the version before the last change.' };
  const version = (await files.versions.list())[0]!;
  return { ok: true, version, restored: target.restore, undid: target.change };
}

/** Writes version `n` back as the current MEMORY.md (a new version, `restore #n`). */
export async function restoreMemory(files: VersionedMemory, n: number): Promise<RevertResult> {
  const info = (await files.versions.list()).find((v) => v.n === n);
  const text = info ? await files.versions.read(n) : undefined;
  if (!info || text === undefined) return { ok: false, reason: `There is no version #${n}; list them with /memory history.` };
  const changed = await files.changeMemory(`restore #${n}`, () => text);
  if (!changed) return { ok: false, reason: `MEMORY.md already has the text of version #${n}.` };
  const version = (await files.versions.list())[0]!;
  return { ok: true, version, restored: info };
}

/** One line per version, newest first: `#12  2026-03-10 12:00 UTC  consolidation  +2 −1 entries`. */
export function formatVersions(list: VersionInfo[], max = 20): string[] {
  return list
    .slice(0, max)
    .map((v, i) => `#${v.n}  ${v.at.replace('T', ' ').slice(0, 16)} UTC  ${v.source}  +${v.added} −${v.removed} entries${i === 0 ? '  (current)' : ''}`);
}
