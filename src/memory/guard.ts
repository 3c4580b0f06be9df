/**
 * The rewrite guard. MEMORY.md is rewritten whole by the model (consolidation's
 * `memory_update`, the `memory_rewrite` tool, compression when the file is over
 * MAX_MEMORY_SIZE), and models sometimes answer with a "rewrite" that leaves most facts out.
 * Before such a write, the new text is compared with the current one entry by entry (a line or
 * a bullet, normalized); a rewrite that loses more than a set share of the prior entries is
 * refused — the file stays as it was, the refusal is logged once (code
 * `memory.rewrite_refused`) and counted for /status. Adding and editing pass: an entry counts
 * as kept when most of its words are still in one entry of the new text.
 *
 * Within one turn the rewrites are also judged against MEMORY.md as the turn found it (before its
 * first change): eight rewrites in one answer, each dropping a quarter of what the one before
 * left, took a file from 20 entries to 3 (the path a prompt injection in a tool result takes).
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from '../core/log.js';

/** Share of prior entries a rewrite may drop. */
export const MAX_DROP = 0.25;
/** … when the model was asked to compress a file over MAX_MEMORY_SIZE. */
export const MAX_DROP_COMPRESSION = 0.5;
/** An old entry is kept when this share of its content words is in one new entry. */
const KEPT_OVERLAP = 0.5;
/** Words that say nothing about what a fact is ("The user is …" is in most entries). */
const FILLER = new Set(
  "a an the is are was were be been am of to in on at for and or but with by from as it its this that user users user's s has have had does do".split(' '),
);

/** One normalized entry per non-empty, non-heading line: list markers, case, spacing and end punctuation dropped. */
export function memoryEntries(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || /^#{1,6}\s/.test(line) || /^(-{3,}|\*{3,}|_{3,})$/.test(line)) continue;
    const norm = line
      .replace(/^(?:[-*+]|\d+[.)])\s+/, '')
      .replace(/^\[[ xX]\]\s+/, '')
      .toLowerCase()
      .replace(/\s+/g, ' ')
      .replace(/[.;,!\s]+$/, '')
      .trim();
    if (norm) out.push(norm);
  }
  return out;
}

/** Entries added and removed between two texts (exact, normalized), for version listings. */
export function diffEntries(before: string, after: string): { added: number; removed: number } {
  const a = new Set(memoryEntries(before));
  const b = new Set(memoryEntries(after));
  let added = 0;
  let removed = 0;
  for (const e of b) if (!a.has(e)) added++;
  for (const e of a) if (!b.has(e)) removed++;
  return { added, removed };
}

const words = (entry: string): Set<string> => new Set((entry.match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !FILLER.has(w)));

export interface RewriteVerdict {
  ok: boolean;
  /** Entries in the current file. */
  prior: number;
  /** Of those, entries with no counterpart in the rewrite. */
  dropped: number;
  /** The share allowed to go (0.25 or 0.5). */
  maxDrop: number;
  /** Judged against MEMORY.md as the turn began (the text before its first change), not the file now. */
  sinceTurnStart?: boolean;
}

export function checkRewrite(before: string, after: string, maxDrop: number): RewriteVerdict {
  const prior = [...new Set(memoryEntries(before))];
  const next = [...new Set(memoryEntries(after))];
  const nextSet = new Set(next);
  const nextWords = next.map(words);
  let dropped = 0;
  for (const entry of prior) {
    if (nextSet.has(entry)) continue;
    const w = words(entry);
    if (w.size === 0) continue;
    const kept = nextWords.some((n) => {
      let inter = 0;
      for (const x of w) if (n.has(x)) inter++;
      return inter / w.size >= KEPT_OVERLAP;
    });
    if (!kept) dropped++;
  }
  return { ok: prior.length === 0 || dropped / prior.length <= maxDrop, prior: prior.length, dropped, maxDrop };
}

export interface GuardedWriteResult {
  written: boolean;
  refused?: RewriteVerdict;
}

/**
 * What a guarded write needs of a chat's memory files (MemoryFiles has it); stated here so this
 * module does not import files.ts, which imports it back through versions.ts.
 */
export interface GuardedTarget {
  changeMemory(source: string, change: (current: string) => string | null): Promise<boolean>;
  versions: { noteRefusal(r: { at: string; source: string; prior: number; dropped: number }): Promise<void> };
}

/**
 * MEMORY.md as each running turn found it, per turn and scope: taken once, before the turn's
 * first change of the file, and kept for an hour. Bounded: past 500 turns at once the oldest is
 * taken again at its next change (each rewrite is still judged against the file as it is).
 */
export class TurnBaselines {
  private readonly texts = new LRUCache<string, Promise<string>>({ max: 500, ttl: 3_600_000 });

  /** The text for (`turnId`, `scope`), read with `read` the first time it is asked for. */
  take(turnId: string, scope: string, read: () => Promise<string>): Promise<string> {
    const key = `${turnId}\u0000${scope}`;
    let text = this.texts.get(key);
    if (!text) {
      text = read();
      this.texts.set(key, text);
      // A failed read is not kept: the next change tries again.
      text.catch(() => this.texts.delete(key));
    }
    return text;
  }
}

/**
 * Writes `next(current)` to MEMORY.md (decided under the file's lock, against what is on disk
 * at that moment) unless the guard refuses it. `source` names the writer in versions and logs.
 * `baseline`: MEMORY.md as the turn began (TurnBaselines); the rewrite must also keep enough of it.
 */
export async function guardedMemoryWrite(
  files: GuardedTarget,
  opts: { source: string; maxDrop: number; log: Logger; next: (current: string) => string | null; scope?: string; baseline?: string | undefined },
): Promise<GuardedWriteResult> {
  let refused: RewriteVerdict | undefined;
  const written = await files.changeMemory(opts.source, (current) => {
    const next = opts.next(current);
    if (next === null) return null;
    // The turn's start first (when the file has changed since): when both refuse, the model hears of the whole turn's drops.
    const sinceStart =
      opts.baseline === undefined || opts.baseline === current ? [] : [{ ...checkRewrite(opts.baseline, next, opts.maxDrop), sinceTurnStart: true }];
    refused = [...sinceStart, checkRewrite(current, next, opts.maxDrop)].find((v) => !v.ok);
    return refused ? null : next;
  });
  if (refused) {
    const v: RewriteVerdict = refused;
    const against = v.sinceTurnStart ? ' MEMORY.md had when the turn began' : '';
    opts.log.warn(
      {
        code: 'memory.rewrite_refused',
        source: opts.source,
        prior: v.prior,
        dropped: v.dropped,
        maxDropPercent: Math.round(v.maxDrop * 100),
        ...(v.sinceTurnStart ? { since: 'turn start' } : {}),
        ...(opts.scope ? { scope: opts.scope } : {}),
      },
      `refused a MEMORY.md rewrite by ${opts.source}: it dropped ${v.dropped} of the ${v.prior} entries${against} (more than ${Math.round(v.maxDrop * 100)} %); the file is unchanged`,
    );
    await files.versions.noteRefusal({ at: new Date().toISOString(), source: opts.source, prior: v.prior, dropped: v.dropped }).catch(() => undefined);
    return { written: false, refused: v };
  }
  return { written };
}
