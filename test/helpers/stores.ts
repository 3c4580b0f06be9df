/**
 * What a store's contract tests (test/<folder>/<name>.contract.ts) are given, and helpers for
 * the file implementations' harnesses. A contract states what callers rely on, so another
 * implementation (PostgreSQL) passes the same tests by giving its own harness.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { filesContaining, tempDir } from './workspace.js';
import { collect, type Portable } from '../../src/storage/portable.js';

export interface StoreHarness<S> {
  /** A store over empty state, ready to use. */
  store: S;
  /** Another store over the same state, ready to use. The earlier one is left as it is: close it first for a clean restart, or not for a second process. */
  reopen(): Promise<S>;
  /** A store over the state a kill at this instant would leave: the next start after it. The earlier one is abandoned, not closed. */
  crash(): Promise<S>;
  /** Removes every trace of the state. */
  cleanup(): Promise<void>;
  /**
   * Whether any byte of the state as kept now holds `text` (freed space and logs included): what
   * "erased, no byte left" is checked with. Optional: an implementation that cannot tell skips those checks.
   */
  holds?(text: string): Promise<boolean>;
}

/** `test(name, body)` with a fresh harness from `make` (a contract may ask more of it than StoreHarness), cleaned up however the body ends. */
export function contractTest<H extends StoreHarness<unknown>>(make: () => Promise<H>): (name: string, body: (h: H) => Promise<void>) => void {
  return (name, body) =>
    test(name, async () => {
      const h = await make();
      try {
        await body(h);
      } finally {
        await h.cleanup();
      }
    });
}

/**
 * A harness for a store kept in files under one workspace folder: `open(dir)` makes a ready
 * store over the folder `dir`. A crash copies the folder as it is now to a new one — what a
 * kill at this instant leaves on disk — and opens a store over the copy, while the abandoned
 * store goes on (its background writes land in the old folder, as a dead process's never do).
 * `close` lets go of every store opened, abandoned ones too, before the folders are removed:
 * a background write into a removed folder would retry its lock for seconds. `holds` reads every
 * file of the current folder (case-insensitively, as purge's tests do).
 */
export async function fileHarness<S>(open: (dir: string) => Promise<S>, close?: (store: S) => Promise<void>): Promise<StoreHarness<S>> {
  const dirs: Array<{ cleanup: () => Promise<void> }> = [];
  const opened: S[] = [];
  const fresh = async () => {
    const t = await tempDir('membot-store-');
    dirs.push(t);
    return t.dir;
  };
  const openHere = async () => {
    const store = await open(dir);
    opened.push(store);
    return store;
  };
  let dir = await fresh();
  return {
    store: await openHere(),
    reopen: openHere,
    crash: async () => {
      const next = await fresh();
      await copyAsKilled(dir, next);
      dir = next;
      return openHere();
    },
    cleanup: async () => {
      if (close) for (const store of opened) await close(store).catch(() => undefined);
      for (const d of dirs) await d.cleanup();
    },
    holds: async (text) => (await filesContaining(dir, text)).length > 0,
  };
}

/**
 * Copies `from` into `to` as a kill would leave it: files are copied one by one, and one that
 * vanishes meanwhile (a temp file renamed into place) is skipped — the rename is atomic, so the
 * copy holds the old file or the new one. Lock folders (`*.lock`) are left out: the next start
 * removes those a dead process held (storage/daemon-lock.ts).
 */
async function copyAsKilled(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const e of await readdir(from, { withFileTypes: true }).catch(() => [])) {
    if (e.name.endsWith('.lock')) continue;
    const src = path.join(from, e.name);
    const dst = path.join(to, e.name);
    if (e.isDirectory()) await copyAsKilled(src, dst);
    else if (e.isFile()) await copyFile(src, dst).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
  }
}

/** The items as the async iterable `Portable.load` takes. */
export async function* itemsOf<I>(items: readonly I[]): AsyncIterable<I> {
  yield* items;
}

/**
 * Loads `items` (another store's dump) into `target` and checks what a move between the files and
 * PostgreSQL relies on (storage/portable.ts): the target was empty, takes every item, and dumps
 * the same items back.
 */
export async function loadsTheSame<I>(target: Portable<I>, items: readonly I[]): Promise<void> {
  assert.equal(await target.isEmpty(), true, `${target.portableName}: empty before`);
  assert.equal(await target.load(itemsOf(items)), items.length);
  assert.equal(await target.isEmpty(), items.length === 0);
  assert.deepEqual(await collect(target.dump()), items, `${target.portableName}: the same items`);
}
