/**
 * /stop across processes. The process that receives a /stop is not always the one running the
 * chat's turn: that one holds the chat's claim (claims.ts). The /stop goes to it as a
 * notification (`NOTIFY membot_stop`, a payload naming the process, the chat and who asks), it
 * stops what it runs there with its own ChatStops (dispatch/stop.ts) and answers the same way with
 * what it did, which the receiving process words as it would its own (`ChatStops.reply`).
 *
 * Every process listens on the channel (one connection, listen.ts) and takes only what is
 * addressed to it. A holder that does not answer within `waitMs` (it died: its claim expires and
 * the turn is run again elsewhere; or its listening connection is down) is reported `unreached`.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../core/log.js';
import type { Role } from '../core/message.js';
import type { StopOutcome } from '../dispatch/stop.js';
import type { Database } from '../storage/pg/database.js';
import type { Chat, ChatClaims } from './claims.js';

const CHANNEL = 'membot_stop';
const DEFAULT_WAIT_MS = 5_000;

export interface StopBy {
  userId: string;
  role: Role | undefined;
}

/** What this process runs of a chat, stopped: the dispatcher's `ChatStops.stop`. */
export type LocalStop = (key: string, by: StopBy) => StopOutcome;

export interface StopResult {
  outcome: StopOutcome;
  /** here: this process holds the chat (or nobody does); holder: the holder answered; unreached: it did not. */
  where: 'here' | 'holder' | 'unreached';
}

type Message = { t: 'stop'; to: string; from: string; req: string; key: string; by: StopBy } | { t: 'done'; to: string; req: string; outcome: StopOutcome };

const NOTHING: StopOutcome = { turn: 'none', skipped: 0, command: undefined };

export class ClusterStops {
  private readonly waiting = new Map<string, (outcome: StopOutcome) => void>();
  private unlisten: (() => void) | undefined;

  private constructor(
    private readonly db: Database,
    private readonly claims: Pick<ChatClaims, 'owner' | 'holder'>,
    private readonly local: LocalStop,
    private readonly log: Logger,
    private readonly waitMs: number,
  ) {}

  /** Listens for the /stops addressed to this process (and their answers). */
  static async open(
    db: Database,
    claims: Pick<ChatClaims, 'owner' | 'holder'>,
    local: LocalStop,
    opts: { log: Logger; waitMs?: number },
  ): Promise<ClusterStops> {
    const stops = new ClusterStops(db, claims, local, opts.log, opts.waitMs ?? DEFAULT_WAIT_MS);
    stops.unlisten = await db.listen(CHANNEL, (payload) => stops.heard(payload));
    return stops;
  }

  /** Stops what runs of `chat` (session key `key`) for `by`, wherever it runs. */
  async stop(chat: Chat, key: string, by: StopBy): Promise<StopResult> {
    const holder = await this.claims.holder(chat);
    if (holder === undefined || holder === this.claims.owner) return { outcome: this.local(key, by), where: 'here' };
    const req = randomBytes(8).toString('hex');
    const answered = new Promise<StopOutcome | undefined>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(req);
        resolve(undefined);
      }, this.waitMs);
      this.waiting.set(req, (outcome) => {
        clearTimeout(timer);
        this.waiting.delete(req);
        resolve(outcome);
      });
    });
    await this.send({ t: 'stop', to: holder, from: this.claims.owner, req, key, by });
    const outcome = await answered;
    if (outcome) return { outcome, where: 'holder' };
    this.log.warn({ session: key, holder }, '/stop: the process running the chat did not answer');
    return { outcome: NOTHING, where: 'unreached' };
  }

  close(): void {
    this.unlisten?.();
    for (const resolve of this.waiting.values()) resolve(NOTHING);
  }

  private heard(payload: string | undefined): void {
    // Called without a payload after a reconnect: nothing to do (a /stop missed meanwhile is not replayed; its sender reports it unreached).
    if (!payload) return;
    let msg: Message;
    try {
      msg = JSON.parse(payload) as Message;
    } catch {
      return;
    }
    if (msg.to !== this.claims.owner) return;
    if (msg.t === 'done') {
      // JSON has no undefined: a missing command is none.
      this.waiting.get(msg.req)?.({ ...msg.outcome, command: msg.outcome.command ?? undefined });
      return;
    }
    const outcome = this.local(msg.key, msg.by);
    this.log.info({ session: msg.key, from: msg.from, ...outcome }, '/stop from another process');
    void this.send({ t: 'done', to: msg.from, req: msg.req, outcome });
  }

  private send(msg: Message): Promise<void> {
    return this.db.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify(msg)]).then(
      () => undefined,
      (err: unknown) => this.log.warn({ err }, '/stop could not be sent to another process'),
    );
  }
}
