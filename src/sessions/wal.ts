/**
 * The session write-ahead log of FileSessionStore (`workspace/sessions.wal.jsonl`). A turn
 * makes its messages durable with one appended, fsynced line here, and the session's JSON file
 * is rewritten afterwards, off the turn's path (a checkpoint). Rewriting a 1,000-message session file with fsync before
 * every reply cost more than the rest of the turn; one append costs about half a millisecond.
 *
 * Every line carries a sequence number that only grows (microseconds of the clock, or the
 * last one + 1), and every session file records the newest line it contains (`walSeq`), so a
 * replay after a crash applies exactly the lines a file is missing — never a line from before
 * a `/new` or a compaction, which rewrite the file in full. The log is emptied once every
 * session it names has been checkpointed.
 */
import { readFile } from 'node:fs/promises';
import { AppendLog } from '../storage/append-log.js';
import { repairMessage, type Session, type SessionMessage } from './model.js';
import type { WalLine } from './store.js';

interface Base {
  base: number;
}

/**
 * One line of the session log as text (the file's lines, the PostgreSQL log's rows): a WalLine,
 * the file's `base` line, or undefined for a blank, torn or foreign one. Lines written before tool
 * calls were normalized can hold badly typed fields: repaired here like a session file's, so a
 * replay cannot bring them back.
 */
export function parseLogLine(raw: string): WalLine | Base | undefined {
  if (!raw.trim()) return undefined;
  let line: WalLine | Base;
  try {
    line = JSON.parse(raw) as WalLine | Base;
  } catch {
    return undefined;
  }
  if (!line || typeof line !== 'object') return undefined;
  if ('base' in line) return typeof line.base === 'number' ? line : undefined;
  if (!Array.isArray(line.messages) || typeof line.seq !== 'number' || typeof line.channelType !== 'string' || typeof line.chatId !== 'string')
    return undefined;
  const messages = line.messages.map((m) => repairMessage(m)).filter((m): m is SessionMessage => m !== null);
  return { ...line, messages };
}

/**
 * Applies log lines to the sessions they name where a session does not hold them yet (its
 * `walSeq` is older): what a crash kept from reaching a session file, or what a move brought
 * beside a session. A message the session has (by id) is not added twice. Returns the sessions
 * changed, to be written, and how many messages were restored.
 */
export async function applyLines(lines: WalLine[], sessionOf: (line: WalLine) => Promise<Session>): Promise<{ sessions: Session[]; restored: number }> {
  // Ids already in each session, built once per session (not per line: restarts stay fast).
  const touched = new Map<string, { session: Session; have: Set<string> }>();
  let restored = 0;
  for (const line of lines) {
    const session = await sessionOf(line);
    if (line.seq <= (session.walSeq ?? 0)) continue;
    let t = touched.get(session.id);
    if (!t) touched.set(session.id, (t = { session, have: new Set(session.messages.map((m) => m.id)) }));
    for (const m of line.messages) {
      if (t.have.has(m.id)) continue;
      t.have.add(m.id);
      session.messages.push(m);
      restored++;
    }
    session.walSeq = line.seq;
  }
  return { sessions: [...touched.values()].map((t) => t.session), restored };
}

/** Work still deriving from a session log's lines (SessionWriter.hold): the log keeps them while any holds. */
export class Holds {
  count = 0;

  /** One more hold, until the returned release is called (once). */
  hold(): () => void {
    this.count++;
    let held = true;
    return () => {
      if (held) this.count--;
      held = false;
    };
  }
}

/** Empty the log once it is this big and nothing in it is waiting for a checkpoint. */
const TRUNCATE_BYTES = 1_000_000;

export class SessionWal {
  private seq = 0;
  /** Session id → newest line not yet in that session's file. */
  private readonly pending = new Map<string, number>();
  /** A write and an fsync per turn, to a file kept open. */
  private readonly log: AppendLog;

  constructor(readonly file: string) {
    this.log = new AppendLog(file);
  }

  /** Lines of an earlier run, oldest first; a line torn by a kill is skipped. */
  async read(): Promise<WalLine[]> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch {
      return [];
    }
    const out: WalLine[] = [];
    for (const raw of text.split('\n')) {
      const line = parseLogLine(raw);
      if (!line) continue;
      if ('base' in line) this.seq = Math.max(this.seq, line.base);
      else {
        this.seq = Math.max(this.seq, line.seq);
        out.push(line);
      }
    }
    return out;
  }

  /** Logs `messages` of a session durably; returns the line's sequence number. */
  append(
    session: { id: string; channelType: string; chatId: string; metadata: { conversationId: string } },
    messages: SessionMessage[],
  ): { seq: number; written: Promise<void> } {
    const seq = (this.seq = Math.max(Date.now() * 1000, this.seq + 1));
    this.pending.set(session.id, seq);
    const line: WalLine = { seq, channelType: session.channelType, chatId: session.chatId, conversation: session.metadata.conversationId, messages };
    const text = `${JSON.stringify(line)}\n`;
    const written = this.log.append(text, true);
    return { seq, written };
  }

  /**
   * Runs before the log forgets its lines: what is derived from them (daily notes, index rows)
   * is made durable first, or the log is kept (the hook throws).
   */
  beforeForget: (() => Promise<void>) | undefined;
  /** Checked again where the log decides: false while something derived is not yet durable (a note written after `beforeForget`). */
  forgettable: () => boolean = () => true;
  /** Work still deriving from logged lines (a turn before its note and index rows are written): the log is kept meanwhile. */
  private readonly holds = new Holds();

  /** Keeps the log's lines until the returned release is called (once). */
  hold(): () => void {
    return this.holds.hold();
  }

  /** The session's file now holds every line up to `upTo`. */
  checkpointed(sessionId: string, upTo: number): void {
    if ((this.pending.get(sessionId) ?? 0) <= upTo) this.pending.delete(sessionId);
    if (this.pending.size === 0 && this.log.bytes > TRUNCATE_BYTES) void this.truncate(false).catch(() => undefined);
  }

  /** Sessions with lines not yet in their file. */
  waiting(sessionId: string): boolean {
    return this.pending.has(sessionId);
  }

  /**
   * Empties the log (keeping the sequence number), unless a line is waiting for a checkpoint.
   * Decided inside the serial chain, so a line appended meanwhile is never cut away.
   */
  async truncate(force: boolean): Promise<void> {
    await this.beforeForget?.();
    await this.log.replaceIf(() =>
      !force && (this.pending.size > 0 || this.holds.count > 0 || !this.forgettable() || this.log.bytes <= TRUNCATE_BYTES)
        ? null
        : `${JSON.stringify({ base: this.seq } satisfies Base)}\n`,
    );
  }

  /** Replaces the log's text (a move into an empty store: the lines keep their numbers, read at the next start). */
  async replace(text: string): Promise<void> {
    await this.log.replaceIf(() => text);
  }

  /** Empties the log, keeping its numbering (a move's forced clear). */
  async empty(): Promise<void> {
    await this.log.replaceIf(() => `${JSON.stringify({ base: this.seq } satisfies Base)}\n`);
  }

  /** Rewrites the log's text in place (atomic, in order with appends): /forget and purge. */
  rewrite(transform: (text: string) => string | null): Promise<boolean> {
    return this.log.rewrite(transform);
  }

  /** Closes the open log file (shutdown); the next append reopens it. */
  shutdown(): Promise<void> {
    return this.log.shutdown();
  }
}
