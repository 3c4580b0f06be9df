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
 *
 * `asHolder` runs other work that writes a chat (a reminder's delivery) as the chat's holder: in
 * the chat's run here, before it is let go, or under a claim taken for it — never while another
 * process holds the chat, whose copy of the session would then be stale. Taking a chat that way
 * and the general look for work run one at a time: a look already on its way when a chat was
 * taken for a reminder would hand that chat's new entries to a second run of it, beside the first.
 */
import { AppError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { sleep } from '../core/retry.js';
import type { ChatClaims, ClaimedEntry, Chat } from './claims.js';

export interface RunnerOptions {
  /** Handles one entry (intake.handle with the entry as recovered); resolves when it is settled. Called in journal order per chat. */
  run: (entry: ClaimedEntry) => Promise<void>;
  /**
   * Before a batch is handed to `run` (what a dead process left of its entries is taken over
   * here); awaited whole, so the batch still goes to `run` at once, in order. A failure is the
   * caller's to log: the batch runs anyway.
   */
  prepare?: (batch: ClaimedEntry[]) => Promise<void>;
  /** Chats this process runs at once at most (MAX_CONCURRENT_TURNS, say). */
  maxChats: number;
  /** Between two looks for work when none came. */
  idleMs: number;
  log: Logger;
}

const keyOf = (c: Chat) => JSON.stringify([c.channel, c.chatId]);

/** A chat run here. */
interface Active {
  chat: Chat;
  done: Promise<void>;
  /** Work of `asHolder` under way: the chat is let go only once there is none. */
  pins: number;
  unpinned: (() => void) | undefined;
  /** Its claim is being let go: new `asHolder` work waits for `done`, then takes the chat again. */
  releasing: boolean;
}

export class ClaimRunner {
  /** The chats being run here, by keyOf. */
  private readonly active = new Map<string, Active>();
  private stopped = true;
  private wake: AbortController = new AbortController();
  private loop: Promise<void> = Promise.resolve();
  /** The general look for work and `asHolder`'s taking of a chat, one at a time (see the top). */
  private taking: Promise<unknown> = Promise.resolve();

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

  /**
   * Runs `task` as the chat's holder (see the top); `fresh` says whether the chat came from
   * outside this process's run of it (its session may have changed elsewhere). While another
   * process holds the chat it waits, asking every `idleMs`. Rejects (`cluster.stopping`) if this
   * process stops first.
   */
  async asHolder<T>(chat: Chat, task: (fresh: boolean) => Promise<T>): Promise<T> {
    const key = keyOf(chat);
    for (;;) {
      if (this.stopped) throw new AppError('cluster.stopping', { chat: `${chat.channel}:${chat.chatId}` });
      const running = this.active.get(key);
      if (running && !running.releasing) return this.pinned(running, () => task(false));
      if (running) {
        await running.done;
        continue;
      }
      const a = await this.oneAtATime(async () => {
        if (!(await this.claims.hold(chat).catch(() => false))) return undefined;
        // Taken meanwhile by this process's own loop (an entry arrived): run in that chat's run instead.
        if (this.active.has(key)) return null;
        const made: Active = { chat, done: Promise.resolve(), pins: 0, unpinned: undefined, releasing: false };
        this.active.set(key, made);
        return made;
      });
      if (a === null) continue;
      if (a) {
        const result = this.pinned(a, () => task(true));
        a.done = this.runChat(a, [])
          .catch((err: unknown) => this.opts.log.warn({ err }, 'could not let a chat go; kept for now'))
          .finally(() => {
            this.active.delete(key);
            this.poke();
          });
        return result;
      }
      await sleep(this.opts.idleMs);
    }
  }

  private oneAtATime<T>(task: () => Promise<T>): Promise<T> {
    const run = this.taking.then(task, task);
    this.taking = run.catch(() => undefined);
    return run;
  }

  private async pinned<T>(a: Active, task: () => Promise<T>): Promise<T> {
    a.pins++;
    try {
      return await task();
    } finally {
      if (--a.pins === 0) a.unpinned?.();
    }
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
      try {
        await this.oneAtATime(async () => {
          const room = this.opts.maxChats - this.active.size;
          if (room <= 0) return;
          // The chats run here are left to their own loops (runChat), which take what arrives for them.
          const exclude = [...this.active.values()].map((a) => a.chat);
          for (const [key, list] of byChat(await this.claims.claimWork({ maxNewChats: room, exclude }))) {
            const a: Active = { chat: list[0]!.chat, done: Promise.resolve(), pins: 0, unpinned: undefined, releasing: false };
            this.active.set(key, a);
            a.done = this.runChat(a, list).finally(() => {
              this.active.delete(key);
              this.poke();
            });
          }
        });
      } catch (err) {
        this.opts.log.warn({ err }, 'could not claim work; asking again');
      }
      if (this.stopped) return;
      const wake = this.wake;
      await sleep(this.opts.idleMs, wake.signal).catch(() => undefined);
      if (wake.signal.aborted) this.wake = new AbortController();
    }
  }

  /**
   * Runs a chat's entries, batch after batch, and its `asHolder` work, until it is let go (or
   * taken by another process). An `asHolder` run starts it with no entries: it lets go after.
   */
  private async runChat(a: Active, first: ClaimedEntry[]): Promise<void> {
    const { chat } = a;
    let batch = first;
    for (;;) {
      if (batch.length > 0 && this.opts.prepare) await this.opts.prepare(batch).catch(() => undefined);
      await Promise.all(
        batch.map((e) =>
          this.opts.run(e).catch((err: unknown) => this.opts.log.error({ err, entry: e.id }, 'a claimed message failed outside its own failure handling')),
        ),
      );
      // Checked and marked with nothing in between: work asked for after this waits for `done`.
      while (a.pins > 0) await new Promise<void>((r) => (a.unpinned = r));
      a.unpinned = undefined;
      a.releasing = true;
      let outcome: 'released' | 'more' | 'lost';
      try {
        outcome = await this.claims.release(chat);
      } catch (err) {
        // Kept: renewed by the heartbeat, let go at the next try (the chat's next message, or stop).
        this.opts.log.warn({ err }, 'could not let a chat go; kept for now');
        return;
      }
      if (outcome !== 'more') return;
      a.releasing = false;
      batch = await this.claims.claimWork({ chat }).catch(() => []);
      if (batch.length === 0 && a.pins === 0) return;
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
