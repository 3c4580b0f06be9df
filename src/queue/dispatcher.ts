/**
 * One FIFO queue per session key (`channel:chatId`): work for one chat runs strictly in arrival
 * order and never overlaps; different chats run side by side, at most `maxConcurrent` at once.
 * A chat waiting for a free slot keeps its place in line (first come, first served).
 *
 * A task may give its slot back before it ends (`release`): a turn stopped at its deadline
 * lets other chats run at once, while its own chat stays closed until the stopped work has
 * wound down — so one chat still never overlaps itself.
 */
type Task = (release: () => void) => Promise<void>;

interface Lane {
  queue: Array<{ task: Task; resolve: () => void; reject: (err: unknown) => void }>;
  running: boolean;
}

export class DispatcherClosedError extends Error {
  constructor() {
    super('the dispatcher is shutting down and takes no new messages');
  }
}

export class Dispatcher {
  private readonly lanes = new Map<string, Lane>();
  private readonly waiting: string[] = [];
  private active = 0;
  private closed = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly maxConcurrent: number) {}

  /** Queues `task` behind earlier work of the same key; resolves or rejects with the task. */
  submit(key: string, task: Task): Promise<void> {
    if (this.closed) return Promise.reject(new DispatcherClosedError());
    return new Promise<void>((resolve, reject) => {
      let lane = this.lanes.get(key);
      if (!lane) {
        lane = { queue: [], running: false };
        this.lanes.set(key, lane);
      }
      lane.queue.push({ task, resolve, reject });
      if (!lane.running && !this.waiting.includes(key)) this.waiting.push(key);
      this.pump();
    });
  }

  /** True while `key` has work queued or running. */
  busy(key: string): boolean {
    return this.lanes.has(key);
  }

  /** How many tasks of `key` wait behind the running one. */
  queued(key: string): number {
    return this.lanes.get(key)?.queue.length ?? 0;
  }

  get stats(): { active: number; queued: number; chats: number } {
    let queued = 0;
    for (const l of this.lanes.values()) queued += l.queue.length;
    return { active: this.active, queued, chats: this.lanes.size };
  }

  /** Stop taking new work (work already queued still runs). */
  close(): void {
    this.closed = true;
  }

  /** Resolves true when all queued work has finished, false if `timeoutMs` passed first. */
  async drain(timeoutMs: number): Promise<boolean> {
    if (this.isIdle()) return true;
    return new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(false), timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(t);
        resolve(true);
      });
    });
  }

  private isIdle(): boolean {
    return this.active === 0 && this.lanes.size === 0;
  }

  private pump(): void {
    while (this.active < this.maxConcurrent && this.waiting.length > 0) {
      const key = this.waiting.shift()!;
      const lane = this.lanes.get(key);
      const item = lane?.queue.shift();
      if (!lane || !item) continue;
      lane.running = true;
      this.active++;
      let holding = true;
      const release = () => {
        if (!holding) return;
        holding = false;
        this.active--;
        this.pump();
      };
      void (async () => {
        try {
          await item.task(release);
          item.resolve();
        } catch (err) {
          item.reject(err);
        } finally {
          if (holding) {
            holding = false;
            this.active--;
          }
          lane.running = false;
          if (lane.queue.length > 0) this.waiting.push(key);
          else this.lanes.delete(key);
          this.pump();
          if (this.isIdle()) {
            const waiters = this.idleWaiters;
            this.idleWaiters = [];
            for (const w of waiters) w();
          }
        }
      })();
    }
  }
}
