/**
 * FileInbox, the intake journal (inbox.ts) as one append-only JSON-lines file
 * (`workspace/inbox.jsonl`): an `in` line per accepted message (fsynced), `start`, `call`,
 * `called` and `done` lines after it (written, not fsynced: they need only survive a kill,
 * which the page cache does). Emptied once nothing in it is open and it has grown past 1 MB.
 */
import { readFile, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { InboundMessage } from '../core/message.js';
import { AppendLog } from '../storage/append-log.js';
import { WORKSPACE_FILES } from '../storage/workspace-files.js';
import { redactJsonLines, type Redaction } from '../storage/redaction.js';
import { dropJsonLines, parseJsonLines } from '../storage/json-lines.js';
import { KnownMessages, argumentsHash, messageKey, type Inbox, type InboxEntry, type InterruptedCall } from './inbox.js';

type Line =
  | { t: 'in'; id: string; attempt?: number; copyOf?: string; msg: Omit<InboundMessage, 'receivedAt'> & { receivedAt: string } }
  | { t: 'start'; id: string }
  | ({ t: 'call'; id: string } & InterruptedCall)
  | { t: 'called'; id: string }
  | { t: 'done'; id: string };

const ROTATE_BYTES = 1_000_000;
export class FileInbox implements Inbox {
  private readonly pending = new Set<string>();
  /** The journal's messages, to recognise a copy (inbox.ts). */
  private readonly known = new KnownMessages();
  /** Three lines per message (two more per tool call), each one write to a file kept open. */
  private readonly log: AppendLog;

  /** The workspace's journal (storage/workspace-files.ts). */
  static inWorkspace(workspaceDir: string): FileInbox {
    return new FileInbox(path.join(workspaceDir, WORKSPACE_FILES.inbox));
  }

  constructor(readonly file: string) {
    this.log = new AppendLog(file);
  }

  /**
   * Entries accepted by an earlier run and never marked done, oldest first, one per message:
   * the entries of one message (a copy a channel sent again after a kill, or one an older
   * version wrote at each restart) are one entry, the first, whose `attempt` counts the starts
   * of them all. `duplicates`: the ids of the others still open, and of open copies of a message
   * already closed (answered, given up, refused…); they only need closing.
   */
  async unfinished(): Promise<{ entries: InboxEntry[]; duplicates: string[] }> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch {
      return { entries: [], duplicates: [] };
    }
    // Each `in` line's entry: open until its `done`; `carried`, the starts an older version
    // wrote on an entry it re-journaled (its `attempt`), `starts` its own.
    const all = new Map<string, InboxEntry & { key: string; open: boolean; copy: boolean; carried: number; starts: number }>();
    // The call each open entry has under way: closed by `called`; still open at a `start` (a
    // later run began) or at the end of the file, the process died while it ran.
    const running = new Map<string, InterruptedCall>();
    const cutOff = (id: string) => {
      const call = running.get(id);
      running.delete(id);
      if (call) all.get(id)?.interrupted.push(call);
    };
    for (const raw of text.split('\n')) {
      if (!raw.trim()) continue;
      let line: Line;
      try {
        line = JSON.parse(raw) as Line;
      } catch {
        continue; // a line torn by the kill: nothing was promised for it yet
      }
      if (line.t === 'in') {
        const msg = { ...line.msg, receivedAt: new Date(line.msg.receivedAt) };
        all.set(line.id, {
          id: line.id,
          attempt: 0,
          interrupted: [],
          completed: [],
          msg,
          key: messageKey(msg),
          open: true,
          copy: line.copyOf !== undefined,
          carried: line.attempt ?? 0,
          starts: 0,
        });
      } else if (line.t === 'start') {
        cutOff(line.id);
        const e = all.get(line.id);
        if (e) e.starts++;
      } else if (line.t === 'call') {
        if (all.get(line.id)?.open) running.set(line.id, { tool: String(line.tool), args: String(line.args) });
      } else if (line.t === 'called') {
        const call = running.get(line.id);
        running.delete(line.id);
        if (call) all.get(line.id)?.completed.push(call);
      } else {
        const e = all.get(line.id);
        if (e) e.open = false;
        running.delete(line.id);
      }
    }
    for (const id of [...running.keys()]) cutOff(id);
    return this.known.merge(all.values());
  }

  /** Closes entries of an earlier run without handling them (given up on, or duplicates). */
  async close(ids: string[]): Promise<void> {
    for (const id of ids) await this.append({ t: 'done', id }, false);
  }

  /**
   * Records an accepted message; `durable` resolves once it is fsynced. The id is known at
   * once, so handling can start while the write is under way (lines keep their order).
   * A copy of a message the journal holds, open or closed (`copyOf`: the entry that has it) is
   * recorded closed, in the same write: its message is handled, or being handled, under that entry.
   */
  accept(msg: InboundMessage): { id: string; durable: Promise<void>; copyOf?: string } {
    const id = randomBytes(6).toString('hex');
    const copyOf = this.known.copyOf(msg);
    const line = (extra: { copyOf?: string }) =>
      `${JSON.stringify({ t: 'in', id, ...extra, msg: { ...msg, receivedAt: msg.receivedAt.toISOString() } } satisfies Line)}\n`;
    if (copyOf) return { id, copyOf, durable: this.log.append(`${line({ copyOf })}${JSON.stringify({ t: 'done', id } satisfies Line)}\n`, true) };
    this.known.remember(messageKey(msg), id);
    this.pending.add(id);
    return { id, durable: this.log.append(line({}), true) };
  }

  /**
   * Takes over an entry an earlier run left open, under its own id: nothing is written, so a
   * kill during recovery leaves the journal as it was. Its `start` lines keep counting attempts.
   */
  adopt(id: string): { id: string; durable: Promise<void> } {
    this.pending.add(id);
    return { id, durable: Promise.resolve() };
  }

  /** Handling begins (the message left its queue): counts towards giving up on a poison message. */
  async started(id: string): Promise<void> {
    if (this.pending.has(id)) await this.append({ t: 'start', id }, false);
  }

  /**
   * A tool call of the entry's turn is about to run (`args`: its arguments as the model sent
   * them; only their hash is written). Like `start`, written but not fsynced: it must survive
   * the process dying during the call, which the page cache does.
   */
  async callStarted(id: string, tool: string, args: string): Promise<void> {
    if (this.pending.has(id)) await this.append({ t: 'call', id, tool, args: argumentsHash(args) }, false);
  }

  /** The call `callStarted` named has ended (whatever its outcome). */
  async callEnded(id: string): Promise<void> {
    if (this.pending.has(id)) await this.append({ t: 'called', id }, false);
  }

  /**
   * Closes an entry; `others` (an album's further items, answered with it) close in the same
   * write, so a kill never leaves part of an answered album open to be answered again.
   */
  async done(id: string, others: string[] = []): Promise<void> {
    const ids = [id, ...others].filter((x) => this.pending.delete(x));
    if (ids.length === 0) return;
    await this.log.append(ids.map((x) => `${JSON.stringify({ t: 'done', id: x } satisfies Line)}\n`).join(''), false);
    if (this.pending.size === 0) await this.maybeRotate();
  }

  /**
   * Empties the journal when nothing in it is open. Decided inside the serial chain, so an
   * accept that started meanwhile (it marks itself pending first) is never truncated away.
   */
  private async maybeRotate(): Promise<void> {
    await this.log.replaceIf(async () => {
      if (this.pending.size > 0) return null;
      const st = await stat(this.file).catch(() => null);
      return st && st.size > ROTATE_BYTES ? '' : null;
    });
  }

  /** The chat's `in` lines with the words redacted (atomic rewrite, in order with appends); a torn line holding them goes. */
  redact(channel: string, chatId: string, words: Redaction): Promise<boolean> {
    const mine = (l: { t?: unknown; msg?: { channel?: unknown; chatId?: unknown } } | null) =>
      l?.t === 'in' && l.msg?.channel === channel && l.msg.chatId === chatId;
    return this.log.rewrite((text) => redactJsonLines(text, words, mine));
  }

  /** The chats with an entry in the journal (in no order). */
  async chats(): Promise<Array<{ channel: string; chatId: string }>> {
    const out = new Map<string, { channel: string; chatId: string }>();
    const text = await readFile(this.file, 'utf8').catch(() => '');
    for (const { line } of parseJsonLines(text))
      if (typeof line?.msg?.chatId === 'string') out.set(`${line.msg.channel}:${line.msg.chatId}`, { channel: line.msg.channel, chatId: line.msg.chatId });
    return [...out.values()];
  }

  /** Drops the chats' entries: their `in` lines and every line of the same ids (one atomic rewrite, in order with appends). */
  async erase(chats: Array<{ channel: string; chatId: string }>): Promise<string[]> {
    const keys = new Set(chats.map((c) => `${c.channel}:${c.chatId}`));
    // An entry is an "in" line with the message and "start"/"done" lines by id.
    const entries = new Set<string>();
    let dropped = 0;
    await this.log.rewrite((text) => {
      entries.clear();
      const next = dropJsonLines(text, (l) => {
        if (l?.t === 'in' && keys.has(`${l.msg?.channel}:${l.msg?.chatId}`)) {
          entries.add(l.id);
          return true;
        }
        return typeof l?.id === 'string' && entries.has(l.id);
      });
      dropped = next.dropped;
      return next.text;
    });
    for (const id of entries) this.pending.delete(id);
    this.known.forget(entries);
    return dropped > 0 ? [`${dropped} line(s) of the inbox journal ${path.basename(this.file)}`] : [];
  }

  /** Closes the open journal file (shutdown); the next line reopens it. */
  shutdown(): Promise<void> {
    return this.log.shutdown();
  }

  // Accepted messages survive a power cut too; start and done markers only need to survive a
  // kill (the page cache keeps them), and a lost one only costs a harmless re-check.
  private append(line: Line, sync: boolean): Promise<void> {
    return this.log.append(`${JSON.stringify(line)}\n`, sync);
  }
}
