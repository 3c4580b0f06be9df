/**
 * Placeholder messages of streamed answers (edit mode), in `workspace/telegram/placeholders.json`:
 * which chat message stands for the answer to which inbound message, while it is being written.
 *
 * Why on disk: after a kill -9 mid-stream the message stays in the chat with half an answer.
 * The next start reads the list; the turn that answers the same inbound message again (journal
 * recovery) takes the placeholder over and finishes it in place, so the user sees one answer,
 * not a fragment and then a second copy. A placeholder no recovered turn takes is told that
 * the bot restarted (settle), unless it was already being finished (`finishing`: its final
 * edit may have gone out, and the answer is in the session), which is left as it is.
 *
 * This file keeps them as one list (a KeptValue, storage/kept.ts) for the one process of the
 * embedded mode. With DATABASE_URL several processes may serve the bot: each keeps its own rows
 * of a table instead (placeholders-pg.ts), and a process takes over only a dead one's.
 */
import type { Logger } from '../../core/log.js';
import type { KeptValue } from '../../storage/kept.js';

export interface Placeholder {
  /** Session chat id (`{chatId}` or `{chatId}:{threadId}`). */
  chat: string;
  /** The inbound message it answers (Telegram message_id, as the session stores it). */
  source: string;
  /** The Telegram chat and message of the placeholder. */
  chatId: string;
  messageId: number;
  threadId?: number | undefined;
  finishing?: boolean | undefined;
}

/** Where the channel keeps its placeholders: one list (this file) or a process's rows (placeholders-pg.ts). */
export interface Placeholders {
  /** Reads what the last run left (at the channel's start). */
  load(): Promise<void>;
  /**
   * A message another process may have begun answering (several processes serve the bot): its
   * placeholder, if that process is no longer alive, becomes this one's for `take`.
   */
  adopt(chat: string, source: string): Promise<void>;
  /** Takes over a placeholder the last run left for this inbound message (not one being finished). */
  take(chat: string, source: string | undefined): Placeholder | undefined;
  /** The last run's placeholders no turn took over (those being finished are dropped). */
  leftOver(): Placeholder[];
  add(p: Placeholder): Promise<void>;
  /** Its final edit is about to go out. */
  finishing(chat: string, source: string): Promise<void>;
  remove(chat: string, source: string): Promise<void>;
}

/** The placeholders of one process as one list: a file of the workspace. */
export class PlaceholderStore implements Placeholders {
  private readonly live = new Map<string, Placeholder>();
  /** Left by the last run, not yet taken over. */
  private readonly stale = new Map<string, Placeholder>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly kept: KeptValue,
    private readonly log: Logger,
  ) {}

  async load(): Promise<void> {
    let list: unknown;
    try {
      const text = await this.kept.read();
      if (text === undefined) return;
      list = JSON.parse(text);
    } catch (err) {
      this.log.warn({ err }, 'the placeholders list is unreadable; earlier placeholders are left as they are');
      return;
    }
    for (const p of Array.isArray(list) ? (list as Placeholder[]) : []) {
      if (p && typeof p.chat === 'string' && typeof p.source === 'string' && typeof p.chatId === 'string' && Number.isInteger(p.messageId)) {
        this.stale.set(placeholderKey(p.chat, p.source), p);
      }
    }
  }

  /** One process: everything the last run left was loaded at the start. */
  adopt(): Promise<void> {
    return Promise.resolve();
  }

  take(chat: string, source: string | undefined): Placeholder | undefined {
    if (source === undefined) return undefined;
    const p = this.stale.get(placeholderKey(chat, source));
    if (!p || p.finishing) return undefined;
    this.stale.delete(placeholderKey(chat, source));
    this.live.set(placeholderKey(chat, source), { ...p, finishing: false });
    return p;
  }

  leftOver(): Placeholder[] {
    const out = [...this.stale.values()].filter((p) => !p.finishing);
    this.stale.clear();
    void this.persist();
    return out;
  }

  add(p: Placeholder): Promise<void> {
    this.live.set(placeholderKey(p.chat, p.source), p);
    return this.persist();
  }

  finishing(chat: string, source: string): Promise<void> {
    const p = this.live.get(placeholderKey(chat, source));
    if (!p) return Promise.resolve();
    p.finishing = true;
    return this.persist();
  }

  remove(chat: string, source: string): Promise<void> {
    if (!this.live.delete(placeholderKey(chat, source))) return Promise.resolve();
    return this.persist();
  }

  /** One write at a time, each of the whole current list (stale ones kept until settled). */
  private persist(): Promise<void> {
    const next = this.chain.catch(() => undefined).then(() => this.kept.write(`${JSON.stringify([...this.stale.values(), ...this.live.values()])}\n`));
    this.chain = next;
    return next.catch((err: unknown) => this.log.warn({ err }, 'the placeholders list could not be written (a crash now could leave a half answer)'));
  }
}

export function placeholderKey(chat: string, source: string): string {
  return `${chat}\u0000${source}`;
}
