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
 *
 * A forget is recorded before anything is removed (journal.ts) and takes pending
 * reminders first; one a kill cut short is finished at the next start, and its chat told.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../core/log.js';
import type { MemoryIndex } from '../../index/memory-index.js';
import type { FileSessionStore } from '../../sessions/file-store.js';
import type { SessionMessage } from '../../sessions/model.js';
import { withFileLock, writeFileAtomic } from '../../storage/atomic.js';
import { sessionFileKey } from '../../storage/paths.js';
import { HISTORY_FILE, MEMORY_FILE } from '../../memory/files.js';
import type { FileMemoryFiles, FileMemoryService } from '../../memory/file-memory.js';
import { crashPoint } from '../../core/crash-point.js';
import { Phrase, redactJsonLines } from './phrase.js';
import { MAX_ATTEMPTS, PrivacyJournal, type JournalRecord } from './journal.js';
import type { ForgetCounts } from './forget-text.js';

export { MIN_FORGET_CHARS, Phrase, REDACTED, redactJsonLines } from './phrase.js';
export { describeCounts, forgetNotice, type ForgetCounts } from './forget-text.js';

/** Where forgets under way are recorded (journal.ts), in the workspace. */
export const FORGETTING_DIR = 'forgetting';

/**
 * A forget under way. The words stay in the workspace only as long as it runs: once finished
 * (or given up) the record is rewritten without them, and deleted when the chat was told.
 */
export interface ForgetRecord extends JournalRecord {
  /** The words; gone from the file once the forget is finished or given up. */
  words?: string | undefined;
  /** Asked in the chat (/forget confirm): it is told when a start finishes the forget. The memory page's are only logged. */
  notify: boolean;
  /** What the preview counted before anything was removed: what the chat is told went. */
  counts: ForgetCounts;
  /** Set by the start that finished (or gave up on) it, until the chat has been told. */
  outcome?: 'finished' | 'given-up' | undefined;
  /** The index could not be cleaned when it was finished (why). */
  indexOff?: string | undefined;
}

export interface ChatRef {
  channel: string;
  chatId: string;
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
  /** The file implementation: forget still reads and redacts the memory folder itself (#34 item 4 routes it through the store). */
  memory: FileMemoryService;
  index: MemoryIndex;
  /** The file implementation: forget still reads the session folder itself (#34 item 4 routes it through the store). */
  sessions: FileSessionStore;
  /** The inbox journal (queue/inbox.ts). */
  journal?: { rewrite(transform: (text: string) => string | null): Promise<boolean> };
  /** Reminders (reminders/service.ts): the ones whose text holds the words go too. */
  reminders?: {
    countMatching(channel: string, chatId: string, test: (text: string) => boolean): number;
    deleteMatching(channel: string, chatId: string, test: (text: string) => boolean): number;
  };
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
    return (await readdir(dir, { withFileTypes: true }))
      .filter((d) => d.isFile())
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}

const countLines = (text: string, p: Phrase): number => text.split('\n').filter((l) => p.test(l)).length;

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
  /** Forgets under way (journal.ts): finished at the next start when a kill cuts one short. */
  private readonly records: PrivacyJournal<ForgetRecord>;

  constructor(private readonly deps: ForgetDeps) {
    this.records = new PrivacyJournal(path.join(deps.workspaceDir, FORGETTING_DIR), deps.log);
  }

  private filesOf(chat: ChatRef): FileMemoryFiles {
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

  /**
   * Removes the words everywhere this chat's memory keeps them (see the top of this file).
   * Recorded first (journal.ts), so a kill part-way is finished at the next start;
   * `notify`: the chat asked, and is told then.
   */
  async apply(chat: ChatRef, words: string, opts: { notify?: boolean } = {}): Promise<ForgetApplied> {
    const p = new Phrase(words);
    const report = await this.preview(chat, words);
    const id = await this.records.begin({
      channel: chat.channel,
      chatId: chat.chatId,
      words: p.text,
      notify: opts.notify === true,
      counts: report.counts,
      attempt: 1,
    });
    crashPoint('forget:recorded');
    const applied = await this.remove(chat, p, report);
    await this.records.end(id);
    return applied;
  }

  /**
   * Finishes the forgets an earlier run began and did not end (at start, before any message is
   * handled or reminder sent): each is rewritten without its words once done. Returns those
   * whose chat is still to be told (`told` removes each record then).
   */
  async finishInterrupted(): Promise<Array<{ id: string; record: ForgetRecord }>> {
    const toTell: Array<{ id: string; record: ForgetRecord }> = [];
    for (const { id, record } of await this.records.left()) {
      const chat = { channel: record.channel, chatId: record.chatId };
      const at = { chat: `${chat.channel}:${chat.chatId}`, attempt: record.attempt };
      let done = record;
      try {
        if (!record.outcome && (record.attempt >= MAX_ATTEMPTS || !record.words)) {
          this.deps.log.error(at, 'a /forget did not finish in several runs in a row; given up (the chat is told)');
          done = { ...record, words: undefined, outcome: 'given-up' };
          await this.records.update(id, done);
        } else if (!record.outcome) {
          this.deps.log.warn(at, 'a /forget was cut off by the last stop; finishing it');
          await this.records.update(id, { ...record, attempt: record.attempt + 1 });
          const p = new Phrase(record.words!);
          const applied = await this.remove(chat, p, await this.preview(chat, p.text));
          done = { ...record, words: undefined, outcome: 'finished', indexOff: applied.indexOff };
          await this.records.update(id, done);
        }
        if (done.notify) toTell.push({ id, record: done });
        else await this.records.end(id);
      } catch (err) {
        // The daemon starts anyway; the record stays for the next start (which counts this run).
        this.deps.log.error({ ...at, err }, 'a /forget cut off by the last stop could not be finished; tried again at the next start');
      }
    }
    return toTell;
  }

  /** The chat was told of a forget `finishInterrupted` finished: its record goes. */
  told(id: string): Promise<void> {
    return this.records.end(id);
  }

  /** The removal itself, in an order that takes first what could show the words again soonest. */
  private async remove(chat: ChatRef, p: Phrase, report: ForgetReport): Promise<ForgetApplied> {
    const files = this.filesOf(chat);
    const touched: string[] = [];
    const rel = (file: string) => path.relative(this.deps.workspaceDir, file);

    // Reminders first: a due one would post the words into the chat while the rest runs.
    if ((this.deps.reminders?.deleteMatching(chat.channel, chat.chatId, (t) => p.test(t)) ?? 0) > 0) touched.push('schedules.db');
    crashPoint('forget:reminders');

    // MEMORY.md first (its pre-image becomes a version), then every version is redacted.
    let memoryVersion: number | undefined;
    const changed = await files.changeMemory('forget', (cur) =>
      cur
        .split('\n')
        .filter((l) => !p.test(l))
        .join('\n'),
    );
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
        crashPoint('forget:rows');
        // In a worker: the other chats are answered meanwhile (index/store/scrubber.ts).
        await this.deps.index.scrubFreedSpace();
      } catch (err) {
        indexOff = (err as Error).message;
        this.deps.log.warn({ err: indexOff }, 'forget: memory.db could not be cleaned; run /forget confirm again once it works');
      }
    } else {
      indexOff = this.deps.index.disabledReason ?? 'the index is off';
    }
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
