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
import { diffEntries } from './guard.js';

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

/** The list of versions and the number the next one gets, as every implementation keeps them. */
export interface VersionLog {
  next: number;
  /** Oldest first. */
  entries: VersionInfo[];
}

/**
 * Records in `log` (changed in place) the change of MEMORY.md from `before` to `after` made by
 * `source`: first `before` itself when it is not the newest version's text (`lastText`: the
 * first change, or an edit made around MemoryFiles), then `after`. Returns the texts to keep
 * under the new numbers, in order, and the numbers no longer kept (the oldest beyond MAX_VERSIONS).
 */
export function recordVersion(
  log: VersionLog,
  lastText: string | undefined,
  before: string,
  after: string,
  source: string,
): { added: Array<{ n: number; text: string }>; dropped: number[] } {
  const added: Array<{ n: number; text: string }> = [];
  const add = (text: string, source: string, prev: string, undoes?: number) => {
    const n = log.next++;
    const d = diffEntries(prev, text);
    log.entries.push({
      n,
      at: new Date().toISOString(),
      source,
      added: d.added,
      removed: d.removed,
      bytes: Buffer.byteLength(text),
      ...(undoes ? { undoes } : {}),
    });
    added.push({ n, text });
  };
  const last = log.entries.at(-1);
  if (lastText !== before) add(before, last ? 'hand edit' : before.trim() ? 'before versioning' : 'empty', lastText ?? '');
  const undoes = /^undo #(\d+)$/.exec(source)?.[1];
  add(after, source, before, undoes ? Number(undoes) : undefined);
  const dropped: number[] = [];
  while (log.entries.length > MAX_VERSIONS) dropped.push(log.entries.shift()!.n);
  return { added, dropped };
}

/** MemoryVersions.undoTarget over the versions kept (oldest first). */
export function undoTargetIn(entries: readonly VersionInfo[]): { change: VersionInfo; restore: VersionInfo } | undefined {
  const undone = new Set<number>();
  for (let i = entries.length - 1; i > 0; i--) {
    const e = entries[i]!;
    if (e.undoes !== undefined) {
      undone.add(e.undoes);
      continue;
    }
    if (undone.has(e.n)) continue;
    return { change: e, restore: entries[i - 1]! };
  }
  return undefined;
}

/** A version's text without the lines `drop` accepts, and how many went (MemoryVersions.redact). */
export function withoutLines(text: string, drop: (line: string) => boolean): { text: string; removed: number } {
  const lines = text.split('\n');
  const kept = lines.filter((l) => !drop(l));
  return { text: kept.join('\n'), removed: lines.length - kept.length };
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
