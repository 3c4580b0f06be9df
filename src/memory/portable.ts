/**
 * The memory files as items that move between the embedded files and PostgreSQL (storage/
 * portable.ts): FileMemoryService (file-portable.ts) and PgMemoryService (pg/portable.ts) dump
 * and load the same items, in the same order, so a move and a move back give the same files
 * byte for byte — the versions' index.json too, as the bot writes it.
 *
 * A scope is the scope key (`channel:chatId`, or 'global' for the memory folder's own files).
 * Per scope, in this order: its files by name (`MEMORY.md`, notes, history, anything else kept
 * in the folder, `versions/…` files the index does not list), then its versions' log, then its
 * versions oldest first.
 */
import type { Refusals, VersionInfo } from './versions.js';

export type MemoryItem =
  /** A file of the scope's folder: its name there (a path below it, `/`-separated) and its text. */
  | { kind: 'file'; scope: string; name: string; text: string }
  /** versions/index.json but its entries: the next version's number and the guard's refusals. */
  | { kind: 'versions'; scope: string; next: number; refused: Refusals }
  /** One version: its entry in the index, and its text (absent: listed, but its text was not kept). */
  | { kind: 'version'; scope: string; info: VersionInfo; text?: string };

export const MEMORY_ITEMS = 'memory files';

/** The order of scopes and of names in a dump (UTF-16 order, the same in both stores). */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A version's entry with its fields in the order the index keeps them (and nothing else). */
export function versionEntry(v: Omit<VersionInfo, 'undoes'> & { undoes?: number | null }): VersionInfo {
  return {
    n: v.n,
    at: v.at,
    source: v.source,
    added: v.added,
    removed: v.removed,
    bytes: v.bytes,
    ...(v.undoes !== undefined && v.undoes !== null ? { undoes: v.undoes } : {}),
  };
}
