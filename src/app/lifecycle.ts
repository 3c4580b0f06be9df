/**
 * The daemon's stop, in the reverse of the order its parts were built: the app adds each part
 * (a store, the dispatcher, the nightly jobs, the MCP servers …) here as it builds it, with what
 * stopping it takes, so no function hand-orders the shutdown of a dozen resources. A part is
 * stopped before anything it was built from, as Fastify runs its `onClose` hooks. Two rounds,
 * each in reverse order of adding:
 *
 * 1. `stop`: take no new work — the reminder timer, the nightly jobs, and last the dispatcher
 *    (added first), which then waits for the running turns (bounded: SHUTDOWN_TIMEOUT_MS) and
 *    returns false when some did not end;
 * 2. `close`: write out and release what is held (sessions, journals, databases, MCP servers),
 *    told whether every turn ended (the session log is forgotten only then).
 */

export interface Closing {
  /** Every running turn ended before the close (none was cut off by the shutdown timeout). */
  drained: boolean;
}

export interface LifecyclePart {
  /** What it is, for reading the order (`parts()`). */
  name: string;
  /** Takes no new work; returns (or resolves to) false when work it waited for did not end in time. */
  stop?: () => unknown;
  /** Releases what it holds; after every part's `stop`. */
  close?: (how: Closing) => Promise<void> | void;
}

export class Lifecycle {
  private readonly added: LifecyclePart[] = [];

  /** Adds a part once it is built; it is stopped and closed before every part added earlier. */
  add(part: LifecyclePart): void {
    this.added.push(part);
  }

  /** The parts in the order they were added (the stop runs it backwards). */
  parts(): string[] {
    return this.added.map((p) => p.name);
  }

  /** Stops, then closes, every part, last added first. */
  async stop(): Promise<Closing> {
    const reversed = [...this.added].reverse();
    let drained = true;
    for (const p of reversed) if ((await p.stop?.()) === false) drained = false;
    for (const p of reversed) await p.close?.({ drained });
    return { drained };
  }
}
