/**
 * The memory folder as MemoryItems (portable.ts), for FileMemoryService's Portable: every
 * regular file kept, scope by scope — the folder's own files are scope 'global', each chat
 * folder (`{channel}:{chatId}`, storage/paths.ts) its chat's — with versions/index.json and the
 * texts it lists as version items, and any other file (a note, a hand-made file, a version text
 * the index does not list) as it lies. Hidden files (a write's temporary file) and lock folders
 * are not memory. Loading writes the same files back, and the index as FileMemoryVersions writes
 * it, so a dump loaded elsewhere and dumped again is the same items, and the same bytes on disk.
 *
 * A chat folder whose name cannot be read back as its chat (shortened with a hash: an id of
 * over a hundred characters) is refused (input.invalid) rather than left behind.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../core/errors.js';
import { chatKey, parseChatKey } from '../core/chat.js';
import { ensureDir, writeFileAtomic } from '../storage/atomic.js';
import { chatOfFileKey, resolveLexically, sessionFileKey } from '../storage/paths.js';
import { readRegular } from '../storage/regular.js';
import { VERSIONS_DIR } from './file-versions.js';
import { byCodeUnits, versionEntry, type MemoryItem } from './portable.js';
import type { Refusals, VersionInfo } from './versions.js';

const INDEX = 'index.json';

const notMemory = (name: string): boolean => name.startsWith('.') || name.endsWith('.lock');

/** The regular files below `dir` (`/`-separated paths), sub-folders included; none when it does not exist. */
async function filesBelow(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (notMemory(e.name)) continue;
    if (e.isFile()) out.push(`${prefix}${e.name}`);
    else if (e.isDirectory()) out.push(...(await filesBelow(path.join(dir, e.name), `${prefix}${e.name}/`)));
  }
  return out;
}

/** The scopes kept under `root`, each with its folder: 'global' the root itself, a chat its folder. */
async function scopesIn(root: string): Promise<Array<{ scope: string; dir: string }>> {
  const out = [{ scope: 'global', dir: root }];
  for (const e of await readdir(root, { withFileTypes: true }).catch(() => [])) {
    if (!e.isDirectory() || notMemory(e.name) || e.name === VERSIONS_DIR) continue;
    const chat = chatOfFileKey(e.name);
    if (!chat || sessionFileKey(chat.channel, chat.chatId) !== e.name) {
      throw new AppError('input.invalid', {
        what: `memory folder ${e.name}`,
        problem: 'its name does not say its chat (a long chat id is shortened with a hash); move or remove it and try again',
      });
    }
    out.push({ scope: chatKey(chat), dir: path.join(root, e.name) });
  }
  return out.sort((a, b) => byCodeUnits(a.scope, b.scope));
}

interface IndexFile {
  next: number;
  entries: VersionInfo[];
  refused: Refusals;
}

async function readIndex(dir: string): Promise<IndexFile | undefined> {
  try {
    const raw = JSON.parse(await readRegular(path.join(dir, VERSIONS_DIR, INDEX))) as Partial<IndexFile>;
    return Array.isArray(raw.entries) ? { next: raw.next ?? 1, entries: raw.entries, refused: raw.refused ?? { count: 0 } } : undefined;
  } catch {
    return undefined;
  }
}

export async function* dumpMemoryFolder(root: string): AsyncIterable<MemoryItem> {
  for (const { scope, dir } of await scopesIn(root)) {
    // The root's sub-folders are chats' (their own scope), but for its versions/.
    const names = dir === root ? await globalFiles(root) : await filesBelow(dir);
    const index = await readIndex(dir);
    const listed = new Set(index ? [`${VERSIONS_DIR}/${INDEX}`, ...index.entries.map((e) => `${VERSIONS_DIR}/${e.n}.md`)] : []);
    for (const name of names.filter((n) => !listed.has(n)).sort(byCodeUnits)) {
      yield { kind: 'file', scope, name, text: await readRegular(path.join(dir, name)) };
    }
    if (!index) continue;
    yield { kind: 'versions', scope, next: index.next, refused: index.refused };
    for (const e of index.entries) {
      const text = await readRegular(path.join(dir, VERSIONS_DIR, `${e.n}.md`)).catch(() => undefined);
      yield { kind: 'version', scope, info: versionEntry(e), ...(text !== undefined ? { text } : {}) };
    }
  }
}

async function globalFiles(root: string): Promise<string[]> {
  const top = (await readdir(root, { withFileTypes: true }).catch(() => [])).filter((e) => e.isFile() && !notMemory(e.name)).map((e) => e.name);
  return [...top, ...(await filesBelow(path.join(root, VERSIONS_DIR), `${VERSIONS_DIR}/`))];
}

/** The folder of `scope` under `root`. */
function folderOf(root: string, scope: string): string {
  if (scope === 'global') return root;
  const chat = parseChatKey(scope);
  if (!chat) throw new AppError('input.invalid', { what: 'a memory item', problem: `its scope ${JSON.stringify(scope)} is neither 'global' nor a chat` });
  return path.join(root, sessionFileKey(chat.channel, chat.chatId));
}

async function writeInside(dir: string, name: string, text: string): Promise<void> {
  const file = resolveLexically(dir, name);
  await ensureDir(path.dirname(file));
  await writeFileAtomic(file, text);
}

/** Writes the items' files under `root` (which holds none of them), each scope's versions/index.json last. */
export async function loadMemoryFolder(root: string, items: AsyncIterable<MemoryItem>): Promise<number> {
  // `told`: the items said the next number; else it follows the versions.
  const indexes = new Map<string, IndexFile & { told: boolean }>();
  const indexOf = (scope: string) => {
    let idx = indexes.get(scope);
    if (!idx) indexes.set(scope, (idx = { next: 1, entries: [], refused: { count: 0 }, told: false }));
    return idx;
  };
  let count = 0;
  for await (const item of items) {
    count++;
    const dir = folderOf(root, item.scope);
    if (item.kind === 'file') await writeInside(dir, item.name, item.text);
    else if (item.kind === 'versions') Object.assign(indexOf(item.scope), { next: item.next, refused: item.refused, told: true });
    else {
      const idx = indexOf(item.scope);
      idx.entries.push(versionEntry(item.info));
      if (!idx.told) idx.next = Math.max(idx.next, item.info.n + 1);
      if (item.text !== undefined) await writeInside(dir, `${VERSIONS_DIR}/${item.info.n}.md`, item.text);
    }
  }
  for (const [scope, idx] of indexes) {
    // As FileMemoryVersions writes it.
    const file = { version: 1, next: idx.next, entries: idx.entries, refused: idx.refused };
    await writeInside(folderOf(root, scope), `${VERSIONS_DIR}/${INDEX}`, `${JSON.stringify(file, null, 1)}\n`);
  }
  return count;
}

export async function memoryFolderEmpty(root: string): Promise<boolean> {
  return (await filesBelow(root)).length === 0;
}

export async function clearMemoryFolder(root: string): Promise<void> {
  await rm(root, { recursive: true, force: true });
}
