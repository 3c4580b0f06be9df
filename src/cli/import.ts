/**
 * `npm run memory -- import --from openclaw|hermes|nanobot|membot PATH --chat CHANNEL:ID`: another
 * assistant's memory (or a membot /export) read into one chat, with the daemon stopped (it
 * caches memory files and the index). The readers in import/ turn each source's layout into one
 * bundle; import/apply.ts writes it through MemoryFiles and MemoryIndex. A report says what came
 * in, what was there already (a second import adds nothing) and what was left aside, and why.
 */
import path from 'node:path';
import type { Config } from '../config/env.js';
import type { Logger } from '../core/log.js';
import type { CliIo } from '../core/cli-io.js';
import { chatKey, parseChatKey } from '../core/chat.js';
import { acquireDaemonLock } from '../storage/daemon-lock.js';
import { FileMemoryService } from '../memory/file-memory.js';
import { SqliteMemoryIndex } from '../index/sqlite-memory-index.js';
import type { MemoryIndex } from '../index/memory-index.js';
import type { MemoryService } from '../memory/service.js';
import { SOURCES, type ImportBundle, type SourceName } from './import/bundle.js';
import { SourceTree } from './import/source.js';
import { readOpenClaw } from './import/openclaw.js';
import { readHermes } from './import/hermes.js';
import { readNanobot } from './import/nanobot.js';
import { readMembot } from './import/membot.js';
import { Importer, type ImportReport } from './import/apply.js';
import { applyExact } from './import/exact.js';

export const IMPORT_USAGE = 'import --from openclaw|hermes|nanobot|membot PATH --chat CHANNEL:ID';

/** Where each source keeps its memory (said when PATH holds none of it). */
const LAYOUT: Record<SourceName, string> = {
  openclaw: 'OpenClaw keeps MEMORY.md and memory/YYYY-MM-DD.md in its workspace (~/.openclaw/workspace)',
  hermes: 'Hermes keeps MEMORY.md and USER.md in ~/.hermes/memories',
  nanobot: 'nanobot keeps memory/MEMORY.md, USER.md and memory/history.jsonl in its workspace (~/.nanobot/workspace)',
  membot: 'give the file /export made',
};

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

/** The bundle PATH holds for `source`, or why there is none. */
async function readSource(source: SourceName, from: string, timezone: string): Promise<ImportBundle | string> {
  if (source === 'membot') return readMembot(from);
  const tree = await SourceTree.open(from);
  if (!tree) return `${from} is not a folder (give the ${source} workspace or memory folder)`;
  if (source === 'openclaw') return readOpenClaw(tree);
  if (source === 'hermes') return readHermes(tree);
  return readNanobot(tree, timezone);
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The report's lines. */
export function formatReport(r: ImportReport, label: string, from: string, chat: string): string[] {
  const out = [`Imported from ${label} (${from}) into ${chat}:`];
  if (r.restored.length > 0) out.push(`  restored as they were: ${r.restored.join(', ')}`);
  if (r.memory.files.length > 0) {
    out.push(
      `  MEMORY.md: ${plural(r.memory.added, 'entry', 'entries')} added, ${r.memory.present} already there (from ${r.memory.files.join(', ')}; /memory undo takes the change back)`,
    );
  }
  for (const n of r.notes) {
    const how = n.hadNote ? "appended to the chat's note of that day" : 'a new note';
    out.push(
      `  note ${n.date}: ${plural(n.added, 'line')} ${n.added > 0 ? `(${how})` : ''}${n.present > 0 ? `, ${n.present} already there` : ''}`.replace(/ +,/, ','),
    );
  }
  if (r.history.added + r.history.present > 0)
    out.push(`  HISTORY.md: ${plural(r.history.added, 'entry', 'entries')} added, ${r.history.present} already there`);
  const ix = r.index;
  if (ix.off) out.push(`  index: not written (${ix.off}); run the import again once it opens — nothing is added twice`);
  else {
    out.push(
      `  index: ${plural(ix.episodes, 'episode')}, ${plural(ix.facts, 'fact')}${ix.reflections ? `, ${plural(ix.reflections, 'reflection')}` : ''} saved; ${ix.present} already there${ix.later ? `; ${ix.later} not written now (run the import again)` : ''}`,
    );
  }
  if (r.skipped.length > 0) {
    out.push('Not imported:');
    for (const s of r.skipped) out.push(`  - ${s.file}: ${s.why}`);
  }
  return out;
}

export interface ImportStores {
  memory: MemoryService;
  index: MemoryIndex;
}

export async function runImport(args: string[], config: Config, log: Logger, io: CliIo): Promise<number> {
  const source = flag(args, '--from') as SourceName | undefined;
  const chatArg = flag(args, '--chat');
  const chat = chatArg ? parseChatKey(chatArg) : undefined;
  const from = args.find((a, i) => !a.startsWith('--') && !['--from', '--chat'].includes(args[i - 1] ?? ''));
  if (!source || !SOURCES.includes(source) || !chat || !from) {
    io.err(`usage: npm run memory -- ${IMPORT_USAGE}`);
    if (source && !SOURCES.includes(source)) io.err(`--from takes one of: ${SOURCES.join(', ')}`);
    return 2;
  }
  let lock: Awaited<ReturnType<typeof acquireDaemonLock>>;
  try {
    lock = await acquireDaemonLock(config.workspaceDir);
  } catch (err) {
    io.err(`import: ${(err as Error).message} (the daemon caches memory files and the index, so import runs only while it is stopped)`);
    return 1;
  }
  const stores: ImportStores = {
    memory: FileMemoryService.inWorkspace(config.workspaceDir, config.memoryScope),
    index: SqliteMemoryIndex.inWorkspace(config.workspaceDir, log),
  };
  try {
    const bundle = await readSource(source, path.resolve(from), config.timezone);
    if (typeof bundle === 'string') {
      io.err(`import: ${bundle}`);
      return 1;
    }
    if (!bundle.exact && bundle.memory.length + bundle.notes.length + bundle.history.length === 0) {
      io.err(`import: nothing to import found in ${from} — ${LAYOUT[source]}`);
      for (const s of bundle.skipped) io.err(`  - ${s.file}: ${s.why}`);
      return 1;
    }
    const target = {
      files: stores.memory.forChat(chat.channel, chat.chatId),
      index: stores.index,
      scope: stores.memory.scopeKey(chat.channel, chat.chatId),
      timezone: config.timezone,
      source,
    };
    const imp = new Importer(target, bundle);
    if (bundle.exact) await applyExact(target, imp, bundle.exact);
    else {
      await imp.memory();
      await imp.notes();
      await imp.history();
    }
    await imp.finish();
    for (const line of formatReport(imp.report, bundle.label, from, chatKey(chat))) io.out(line);
    return 0;
  } finally {
    stores.index.close();
    await lock.release();
  }
}
