/**
 * The loop a process runs its claimed chats by (claims.ts): it claims work, hands each chat's
 * entries to `run` in journal order — all of a batch at once, so the intake's per-chat queue
 * holds them in order and an album's items arrive together — waits until they are settled, then
 * lets the chat go, or takes what arrived meanwhile and goes on. A chat's entries are never
 * handed over twice by one process, and (the claim) never by two. While a chat runs here only its
 * own loop takes its entries (the general claim leaves it out): an entry handed over is never one
 * a release could leave behind as if nobody ran it.
 *
 * It asks for work every `idleMs` and at once when `poke`d (a message this process accepted);
 * it holds at most `maxChats` chats, so the others' share stays theirs. `stop` stops claiming
 * and waits for the chats under way (SIGTERM); a killed process simply stops — its claims expire.
 */
import type { Logger } from '../core/log.js';
import { sleep } from '../core/retry.js';
import type { ChatClaims, ClaimedEntry, Chat } from './claims.js';

export interface RunnerOptions {
  /** Handles one entry (intake.handle with the entry as recovered); resolves when it is settled. Called in journal order per chat. */
  run: (entry: ClaimedEntry) => Promise<void>;
  /** Chats this process runs at once at most (MAX_CONCURRENT_TURNS, say). */
  maxChats: number;
  /** Between two looks for work when none came. */
  idleMs: number;
  log: Logger;
}

const keyOf = (c: Chat) => JSON.stringify([c.channel, c.chatId]);

export class ClaimRunner {
  /** The chats being run here, by keyOf. */
  private readonly active = new Map<string, { chat: Chat; done: Promise<void> }>();
  private stopped = true;
  private wake: AbortController = new AbortController();
  private loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly claims: ChatClaims,
    private readonly opts: RunnerOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.loop = this.claimLoop();
  }

  /** Looks for work now (a message was just accepted, or a chat let go). */
  poke(): void {
    this.wake.abort();
  }

  /** Chats being run here now. */
  get running(): number {
    return this.active.size;
  }

  /** Stops claiming, and waits until the chats under way are settled and let go. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.poke();
    await this.loop;
    await Promise.all([...this.active.values()].map((a) => a.done));
  }

  private async claimLoop(): Promise<void> {
    while (!this.stopped) {
      const room = this.opts.maxChats - this.active.size;
      let entries: ClaimedEntry[] = [];
      try {
        // The chats run here are left to their own loops (runChat), which take what arrives for them.
        const exclude = [...this.active.values()].map((a) => a.chat);
        entries = room > 0 ? await this.claims.claimWork({ maxNewChats: room, exclude }) : [];
      } catch (err) {
        this.opts.log.warn({ err }, 'could not claim work; asking again');
      }
      for (const [key, list] of byChat(entries)) {
        const chat = list[0]!.chat;
        const done = this.runChat(chat, list).finally(() => {
          this.active.delete(key);
          this.poke();
        });
        this.active.set(key, { chat, done });
      }
      if (this.stopped) return;
      const wake = this.wake;
      await sleep(this.opts.idleMs, wake.signal).catch(() => undefined);
      if (wake.signal.aborted) this.wake = new AbortController();
    }
  }

  /** Runs a chat's entries, batch after batch, until it is let go (or taken by another process). */
  private async runChat(chat: Chat, first: ClaimedEntry[]): Promise<void> {
    let batch = first;
    while (batch.length > 0) {
      await Promise.all(
        batch.map((e) =>
          this.opts.run(e).catch((err: unknown) => this.opts.log.error({ err, entry: e.id }, 'a claimed message failed outside its own failure handling')),
        ),
      );
      let outcome: 'released' | 'more' | 'lost';
      try {
        outcome = await this.claims.release(chat);
      } catch (err) {
        // Kept: renewed by the heartbeat, let go at the next try (the chat's next message, or stop).
        this.opts.log.warn({ err }, 'could not let a chat go; kept for now');
        return;
      }
      batch = outcome === 'more' ? await this.claims.claimWork({ chat }).catch(() => []) : [];
    }
  }
}

function byChat(entries: ClaimedEntry[]): Map<string, ClaimedEntry[]> {
  const out = new Map<string, ClaimedEntry[]>();
  for (const e of entries) {
    const key = keyOf(e.chat);
    const list = out.get(key);
    if (list) list.push(e);
    else out.set(key, [e]);
  }
  return out;
}
