/**
 * Forgetting words: everything this chat's memory holds that contains them — MEMORY.md entries
 * (and every stored version of it), facts and indexed messages in memory.db (with their
 * full-text, entity and vector entries), daily-note and history lines, session messages, the
 * session log, the inbox journal and what `/why` recorded of answers (features/why). `preview` counts; `apply` removes, so that afterwards no
 * byte of the words is left in the workspace (memory.db's freed pages and WAL included, see
 * index/store/erase.ts; and the `/forget` command's own text in the journal).
 *
 * Lines of notes and history are redacted in place (the words become `[forgotten]`, the rest of
 * the line stays, the file is rewritten atomically); MEMORY.md entries, facts, indexed
 * messages, user/assistant session messages and memory writes held for the owner's approval
 * (memory/pending.ts) that contain them are removed whole. A summary
 * or a tool call in the session is redacted instead, so the conversation stays a valid request.
 *
 * A forget is recorded before anything is removed (journal.ts) and takes pending
 * reminders first; one a kill cut short is finished at the next start, and its chat told.
 */
import type { Chat } from '../../core/chat.js';
import path from 'node:path';
import type { Logger } from '../../core/log.js';
import type { MemoryIndex } from '../../index/memory-index.js';
import type { SessionStore } from '../../sessions/store.js';
import type { SessionMessage } from '../../sessions/model.js';
import type { Inbox } from '../../queue/inbox.js';
import { redactFolder } from '../../storage/redaction.js';
import { sessionFileKey } from '../../storage/paths.js';
import { MEMORY_FILE, type MemoryFiles } from '../../memory/files.js';
import type { MemoryService } from '../../memory/service.js';
import type { PendingWrites } from '../../memory/pending.js';
import { WORKSPACE_FILES } from '../../storage/workspace-files.js';
import { crashPoint } from '../../core/crash-point.js';
import { Phrase } from './phrase.js';
import { MAX_ATTEMPTS, PrivacyJournal, type ChangeJournal, type JournalRecord } from './journal.js';
import type { ForgetCounts } from './forget-text.js';

export { MIN_FORGET_CHARS, Phrase, REDACTED } from './phrase.js';
export { describeCounts, forgetNotice, type ForgetCounts } from './forget-text.js';

/** Where forgets under way are recorded (journal.ts), in the workspace. */
export const FORGETTING_DIR = WORKSPACE_FILES.forgetting;

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
  /** What was rewritten, one name each: a file of the workspace (relative path), or what a store calls it (`session`, `MEMORY.md`). */
  files: string[];
  /** The index could not be reached: its rows were not touched. */
  indexOff?: string;
}

export interface ForgetDeps {
  workspaceDir: string;
  memory: MemoryService;
  /** Memory writes held for the owner's approval: those holding the words go. */
  pending?: Pick<PendingWrites, 'matching' | 'forget'> | undefined;
  index: MemoryIndex;
  sessions: Pick<SessionStore, 'getOrCreate' | 'writer' | 'redact'>;
  /** The inbox journal (queue/inbox.ts). */
  journal?: Pick<Inbox, 'redact'>;
  /** Reminders (reminders/service.ts): the ones whose text holds the words go too. */
  reminders?: {
    countMatching(channel: string, chatId: string, test: (text: string) => boolean): Promise<number>;
    deleteMatching(channel: string, chatId: string, test: (text: string) => boolean): Promise<number>;
  };
  log: Logger;
  /** Where forgets under way are recorded (app/stores.ts: PostgreSQL with DATABASE_URL); by default `forgetting/` in the workspace. */
  records?: ChangeJournal<ForgetRecord>;
  /** What answers were built from (/why: features/why/store.ts): the items holding the words go. */
  why?: { forget(chat: string, test: (text: string) => boolean): Promise<number> };
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
  /** Forgets under way (journal.ts): finished at the next start when a kill cuts one short. */
  private readonly records: ChangeJournal<ForgetRecord>;

  constructor(private readonly deps: ForgetDeps) {
    this.records = deps.records ?? new PrivacyJournal(path.join(deps.workspaceDir, FORGETTING_DIR), deps.log);
  }

  private filesOf(chat: Chat): MemoryFiles {
    return this.deps.memory.forChat(chat.channel, chat.chatId);
  }

  private scopeOf(chat: Chat): string {
    return this.deps.memory.scopeKey(chat.channel, chat.chatId);
  }

  /** Counts what `apply` would remove; changes nothing. */
  async preview(chat: Chat, words: string): Promise<ForgetReport> {
    const p = new Phrase(words);
    const lines = await this.filesOf(chat).countLines((l) => p.test(l));
    const counts: ForgetCounts = {
      memoryEntries: lines.memory,
      facts: 0,
      indexedMessages: 0,
      noteLines: lines.notes,
      historyLines: lines.history,
      sessionMessages: 0,
      reminders: 0,
      pendingWrites: (await this.deps.pending?.matching(this.scopeOf(chat), (t) => p.test(t))) ?? 0,
    };
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
    counts.reminders = (await this.deps.reminders?.countMatching(chat.channel, chat.chatId, (t) => p.test(t))) ?? 0;
    return { words: p.text, counts, total: Object.values(counts).reduce((a, b) => a + b, 0) };
  }

  /**
   * Removes the words everywhere this chat's memory keeps them (see the top of this file).
   * Recorded first (journal.ts), so a kill part-way is finished at the next start;
   * `notify`: the chat asked, and is told then.
   */
  async apply(chat: Chat, words: string, opts: { notify?: boolean } = {}): Promise<ForgetApplied> {
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
  private async remove(chat: Chat, p: Phrase, report: ForgetReport): Promise<ForgetApplied> {
    const files = this.filesOf(chat);
    const touched: string[] = [];

    // Reminders first: a due one would post the words into the chat while the rest runs.
    if (((await this.deps.reminders?.deleteMatching(chat.channel, chat.chatId, (t) => p.test(t))) ?? 0) > 0) touched.push('schedules.db');
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
      touched.push(MEMORY_FILE);
    }
    const versionLines = await files.versions.redact((l) => p.test(l));

    // Notes, history and anything else kept of the memory: redacted in place.
    touched.push(...(await files.redact(p)));
    if (((await this.deps.pending?.forget(this.scopeOf(chat), (t) => p.test(t))) ?? 0) > 0) touched.push('held memory writes');

    // The session (its messages, the log, copies set aside as corrupt), the inbox journal, exports.
    const session = await this.deps.sessions.getOrCreate(chat.channel, chat.chatId);
    const plan = sessionPlan(session.messages, p);
    if (plan.touched > 0) {
      await this.deps.sessions.writer(session).replace(plan.keep);
      touched.push('session');
    }
    await this.redactLogs(chat, p, touched);
    if (((await this.deps.why?.forget(`${chat.channel}:${chat.chatId}`, (t) => p.test(t))) ?? 0) > 0) touched.push('why');
    const exportDir = path.join(this.deps.workspaceDir, WORKSPACE_FILES.exports, sessionFileKey(chat.channel, chat.chatId));
    touched.push(...(await redactFolder(exportDir, this.deps.workspaceDir, p)));

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
   * Takes the words out of this chat's lines of the session log (and its session files set aside
   * as corrupt) and of the inbox journal (the `/forget` command's own text is there). Cheap: also
   * run when nothing else matched.
   */
  async redactLogs(chat: Chat, p: Phrase, touched: string[] = []): Promise<string[]> {
    touched.push(...(await this.deps.sessions.redact(chat.channel, chat.chatId, p)));
    if (await this.deps.journal?.redact(chat.channel, chat.chatId, p)) touched.push('inbox.jsonl');
    return touched;
  }
}
