/**
 * Forgetting words: everything this chat's memory holds that contains them — MEMORY.md entries
 * (and every stored version of it), facts and indexed messages in memory.db (with their
 * full-text, entity and vector entries), daily-note and history lines, session messages, the
 * session log and the inbox journal. `preview` counts; `apply` removes, so that afterwards no
 * byte of the words is left in the workspace (memory.db's freed pages and WAL included, see
 * index/store/erase.ts; and the `/forget` command's own text in the journal).
 *
 * Lines of notes and history are redacted in place (the words become `[forgotten]`, the rest of
 * the line stays, the file is rewritten atomically); MEMORY.md entries, facts, indexed
 * messages and user/assistant session messages that contain them are removed whole. A summary
 * or a tool call in the session is redacted instead, so the conversation stays a valid request.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../core/log.js';
import type { MemoryIndex } from '../index/memory-index.js';
import type { SessionStore } from '../sessions/store.js';
import type { SessionMessage } from '../sessions/model.js';
import { withFileLock, writeFileAtomic } from '../storage/atomic.js';
import { sessionFileKey } from '../storage/paths.js';
import { HISTORY_FILE, MEMORY_FILE, type MemoryFiles } from '../memory/files.js';
import type { MemoryService } from '../memory/service.js';

export const REDACTED = '[forgotten]';
/** Shorter words would take out far more than the user means ("/forget a"). */
export const MIN_FORGET_CHARS = 3;

/** The words to forget: matched case-insensitively, any run of spaces between them. */
export class Phrase {
  readonly text: string;
  private readonly once: RegExp;
  private readonly all: RegExp;

  constructor(words: string) {
    this.text = words.trim().replace(/\s+/g, ' ');
    const body = this.text
      .split(' ')
      .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('\\s+');
    this.once = new RegExp(body, 'iu');
    this.all = new RegExp(body, 'giu');
  }

  test(s: string): boolean {
    return this.once.test(s);
  }

  redact(s: string): string {
    return s.replace(this.all, REDACTED);
  }
}

export interface ChatRef {
  channel: string;
  chatId: string;
}

export interface ForgetCounts {
  memoryEntries: number;
  facts: number;
  /** Indexed messages (episodes) and weekly insights. */
  indexedMessages: number;
  noteLines: number;
  historyLines: number;
  sessionMessages: number;
  /** Pending reminders whose text holds the words (schedules.db). */
  reminders: number;
}

export interface ForgetReport {
  words: string;
  counts: ForgetCounts;
  total: number;
}

export interface ForgetApplied extends ForgetReport {
  /** The MEMORY.md version written, when MEMORY.md changed. */
  memoryVersion?: number;
  /** Lines taken out of stored MEMORY.md versions. */
  versionLines: number;
  /** Files of the workspace rewritten (relative paths). */
  files: string[];
  /** The index could not be reached: its rows were not touched. */
  indexOff?: string;
}

export interface ForgetDeps {
  workspaceDir: string;
  memory: MemoryService;
  index: MemoryIndex;
  sessions: SessionStore;
  /** The inbox journal (queue/inbox.ts). */
  journal?: { rewrite(transform: (text: string) => string | null): Promise<boolean> };
  /** Reminders (reminders/service.ts): the ones whose text holds the words go too. */
  reminders?: { countMatching(channel: string, chatId: string, test: (text: string) => boolean): number; deleteMatching(channel: string, chatId: string, test: (text: string) => boolean): number };
  log: Logger;
}

const NOTE_RE = /^\d{4}-\d{2}-\d{2}\.md$/;
const HISTORY_RE = /^HISTORY(-\d{4}-\d{2})?\.md$/;

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

async function names(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((d) => d.isFile()).map((d) => d.name).sort();
  } catch {
    return [];
  }
}

const countLines = (text: string, p: Phrase): number => text.split('\n').filter((l) => p.test(l)).length;

/** Redacts the words in every string of a JSON value. */
function redactValue(v: unknown, p: Phrase): unknown {
  if (typeof v === 'string') return p.test(v) ? p.redact(v) : v;
  if (Array.isArray(v)) return v.map((x) => redactValue(x, p));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, redactValue(x, p)]));
  return v;
}

/**
 * A JSON-lines text with the words redacted in every string of the lines `mine` accepts (the
 * chat's own lines of a shared log); a torn line that holds them is dropped.
 */
export function redactJsonLines(text: string, p: Phrase, mine: (line: any) => boolean = () => true): string {
  return text
    .split('\n')
    .flatMap((line) => {
      if (!line.trim()) return [line];
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        return p.test(line) ? [] : [line];
      }
      if (!mine(parsed)) return [line];
      const next = JSON.stringify(redactValue(parsed, p));
      return next === JSON.stringify(parsed) ? [line] : [next];
    })
    .join('\n');
}

/** Which session messages go and which are redacted (see the top of this file). */
function sessionPlan(messages: SessionMessage[], p: Phrase): { keep: SessionMessage[]; touched: number } {
  const keep: SessionMessage[] = [];
  let touched = 0;
  for (const m of messages) {
    const hit = p.test(m.content) || (m.toolCalls ?? []).some((c) => p.test(c.arguments)) || (m.senderName !== undefined && p.test(m.senderName));
    if (!hit) {
      keep.push(m);
      continue;
    }
    touched++;
    const structural = m.role === 'system' || m.role === 'tool' || (m.toolCalls?.length ?? 0) > 0;
    if (!structural) continue;
    keep.push({
      ...m,
      content: p.redact(m.content),
      ...(m.toolCalls ? { toolCalls: m.toolCalls.map((c) => ({ ...c, arguments: p.redact(c.arguments) })) } : {}),
      ...(m.senderName !== undefined ? { senderName: p.redact(m.senderName) } : {}),
    });
  }
  return { keep, touched };
}

export class ForgetService {
  constructor(private readonly deps: ForgetDeps) {}

  private filesOf(chat: ChatRef): MemoryFiles {
    return this.deps.memory.forChat(chat.channel, chat.chatId);
  }

  private scopeOf(chat: ChatRef): string {
    return this.deps.memory.scopeKey(chat.channel, chat.chatId);
  }

  /** Counts what `apply` would remove; changes nothing. */
  async preview(chat: ChatRef, words: string): Promise<ForgetReport> {
    const p = new Phrase(words);
    const files = this.filesOf(chat);
    const counts: ForgetCounts = { memoryEntries: 0, facts: 0, indexedMessages: 0, noteLines: 0, historyLines: 0, sessionMessages: 0, reminders: 0 };
    counts.memoryEntries = countLines((await readText(path.join(files.dir, MEMORY_FILE))) ?? '', p);
    let monthly = 0;
    for (const name of await names(files.dir)) {
      if (NOTE_RE.test(name)) counts.noteLines += countLines((await readText(path.join(files.dir, name))) ?? '', p);
      else if (name === HISTORY_FILE) counts.historyLines += countLines((await readText(path.join(files.dir, name))) ?? '', p);
      else if (HISTORY_RE.test(name)) monthly += countLines((await readText(path.join(files.dir, name))) ?? '', p);
    }
    // HISTORY-YYYY-MM.md repeat HISTORY.md's entries: counted only when HISTORY.md is gone.
    counts.historyLines = Math.max(counts.historyLines, monthly);
    const erase = this.deps.index.erase;
    try {
      for (const m of erase ? erase.matching(this.scopeOf(chat), (t) => p.test(t)) : []) {
        if (m.kind === 'fact') counts.facts++;
        else counts.indexedMessages++;
      }
    } catch (err) {
      // Locked by another process, say: the files are still counted; apply reports the index.
      this.deps.log.warn({ err: (err as Error).message }, 'forget: memory.db could not be searched');
    }
    const session = await this.deps.sessions.getOrCreate(chat.channel, chat.chatId);
    counts.sessionMessages = sessionPlan(session.messages, p).touched;
    counts.reminders = this.deps.reminders?.countMatching(chat.channel, chat.chatId, (t) => p.test(t)) ?? 0;
    return { words: p.text, counts, total: Object.values(counts).reduce((a, b) => a + b, 0) };
  }

  /** Removes the words everywhere this chat's memory keeps them (see the top of this file). */
  async apply(chat: ChatRef, words: string): Promise<ForgetApplied> {
    const p = new Phrase(words);
    const report = await this.preview(chat, words);
    const files = this.filesOf(chat);
    const touched: string[] = [];
    const rel = (file: string) => path.relative(this.deps.workspaceDir, file);

    // MEMORY.md first (its pre-image becomes a version), then every version is redacted.
    let memoryVersion: number | undefined;
    const changed = await files.changeMemory('forget', (cur) => cur.split('\n').filter((l) => !p.test(l)).join('\n'));
    if (changed) {
      memoryVersion = (await files.versions.list())[0]?.n;
      touched.push(rel(path.join(files.dir, MEMORY_FILE)));
    }
    const versionLines = await files.versions.redact((l) => p.test(l));

    // Notes, history and any other text file of the memory folder: redacted in place.
    for (const name of await names(files.dir)) {
      if (name === MEMORY_FILE || name.startsWith('.')) continue;
      const file = path.join(files.dir, name);
      if (await this.redactFile(file, (t) => (p.test(t) ? p.redact(t) : null))) touched.push(rel(file));
    }

    // The session (file and log), the inbox journal, session files set aside as corrupt, exports.
    const session = await this.deps.sessions.getOrCreate(chat.channel, chat.chatId);
    const plan = sessionPlan(session.messages, p);
    if (plan.touched > 0) {
      await this.deps.sessions.writer(session).replace(plan.keep);
      touched.push(rel(this.deps.sessions.fileFor(chat.channel, chat.chatId)));
    }
    await this.redactLogs(chat, p, touched);
    const key = sessionFileKey(chat.channel, chat.chatId);
    for (const name of await names(this.deps.sessions.dir)) {
      if (!name.startsWith(`${key}.json.corrupt-`)) continue;
      const file = path.join(this.deps.sessions.dir, name);
      if (await this.redactFile(file, (t) => (p.test(t) ? p.redact(t) : null))) touched.push(rel(file));
    }
    const exportDir = path.join(this.deps.workspaceDir, 'exports', key);
    for (const name of await names(exportDir)) {
      const file = path.join(exportDir, name);
      if (await this.redactFile(file, (t) => (p.test(t) ? p.redact(t) : null))) touched.push(rel(file));
    }

    // memory.db: rows, their full-text, entity and vector entries, then the freed space.
    const erase = this.deps.index.erase;
    let indexOff: string | undefined;
    if (erase) {
      try {
        const scope = this.scopeOf(chat);
        // Another chat's scrub may hold messages not yet written (they could hold the words) and
        // would make these deletes wait on its lock: after it, nothing awaits until the scrub.
        await this.deps.index.whenWritable();
        const rows = erase.matching(scope, (t) => p.test(t));
        const removed = erase.memoriesAndEntities(rows, scope, (t) => p.test(t));
        if (removed > 0 || rows.length > 0) touched.push('memory.db');
        // In a worker: the other chats are answered meanwhile (index/store/scrubber.ts).
        await this.deps.index.scrubFreedSpace();
      } catch (err) {
        indexOff = (err as Error).message;
        this.deps.log.warn({ err: indexOff }, 'forget: memory.db could not be cleaned; run /forget confirm again once it works');
      }
    } else {
      indexOff = this.deps.index.disabledReason ?? 'the index is off';
    }
    if ((this.deps.reminders?.deleteMatching(chat.channel, chat.chatId, (t) => p.test(t)) ?? 0) > 0) touched.push('schedules.db');
    this.deps.log.info({ chat: `${chat.channel}:${chat.chatId}`, removed: report.counts, versionLines, files: touched.length }, 'forgot words on request');
    return { ...report, ...(memoryVersion !== undefined ? { memoryVersion } : {}), versionLines, files: touched, ...(indexOff ? { indexOff } : {}) };
  }

  /**
   * Takes the words out of this chat's lines of the session log and the inbox journal (the
   * `/forget` command's own text is there). Cheap: also run when nothing else matched.
   */
  async redactLogs(chat: ChatRef, p: Phrase, touched: string[] = []): Promise<string[]> {
    const walMine = (l: any) => l?.channelType === chat.channel && l?.chatId === chat.chatId;
    const inboxMine = (l: any) => l?.msg?.channel === chat.channel && l?.msg?.chatId === chat.chatId;
    if (await this.deps.sessions.rewriteLog((t) => redactJsonLines(t, p, walMine))) touched.push('sessions.wal.jsonl');
    if (await this.deps.journal?.rewrite((t) => redactJsonLines(t, p, inboxMine))) touched.push('inbox.jsonl');
    return touched;
  }

  /** Atomic rewrite of one file under its lock; true when it changed. */
  private async redactFile(file: string, change: (text: string) => string | null): Promise<boolean> {
    return withFileLock(file, async () => {
      const text = await readText(file);
      if (text === undefined) return false;
      const next = change(text);
      if (next === null || next === text) return false;
      await writeFileAtomic(file, next);
      return true;
    });
  }
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** "1 MEMORY.md entry, 2 facts, …" — the non-zero counts, for the replies. */
export function describeCounts(c: ForgetCounts): string {
  const parts = [
    c.memoryEntries && plural(c.memoryEntries, 'MEMORY.md entry', 'MEMORY.md entries'),
    c.facts && plural(c.facts, 'fact'),
    c.indexedMessages && plural(c.indexedMessages, 'indexed message'),
    c.noteLines && plural(c.noteLines, 'daily-note line'),
    c.historyLines && plural(c.historyLines, 'history line'),
    c.sessionMessages && plural(c.sessionMessages, 'message in this conversation', 'messages in this conversation'),
    c.reminders && plural(c.reminders, 'pending reminder'),
  ].filter(Boolean) as string[];
  return parts.join(', ');
}
