/**
 * The daemon's part in a cluster (docs/cluster.md), only when main asks for it with DATABASE_URL:
 * several daemon processes serve one bot from one database. Without it (the embedded default, the
 * CLIs, the in-process tests) nothing here is loaded or run.
 *
 * - `joinAsMember` (build.ts): registers the process and its heartbeat before its chats' stores
 *   open (its session log lines carry its id: a process starting beside it leaves them) and the
 *   scheduler is made (its nightly jobs ask the member's lease gate); a chat another process
 *   took from this one has its turn and waiting messages handed over quietly here (nothing
 *   sent, saved or closed). Its row goes last at the stop, after the chats under way and the
 *   stores' close.
 * - `runClaims` (app.ts): the intake only journals what arrives here; the ClaimRunner runs the
 *   chats this process claims — whoever accepted their messages, a dead process's included — by
 *   handing each entry to the intake as a recovered one, its reply through this process's
 *   channel. /stop goes to the process that runs the chat's turn (ClusterStops).
 */
import { readFileSync } from 'node:fs';
import type { Config } from '../config/env.js';
import { chatKey, type Chat } from '../core/chat.js';
import type { Reply } from '../core/channel.js';
import { componentLogger, type Logger } from '../core/log.js';
import type { InboundMessage } from '../core/message.js';
import { sleep } from '../core/retry.js';
import type { ClaimedEntry } from '../cluster/claims.js';
import { joinCluster, type ClusterMember } from '../cluster/cluster.js';
export { newProcessId } from '../cluster/registry.js';
import { ClaimRunner } from '../cluster/runner.js';
import { ClusterStops } from '../cluster/stops.js';
import type { IntakeCluster } from '../dispatch/intake.js';
import type { ChatStops } from '../dispatch/stop.js';
import type { Database } from '../storage/pg/database.js';
import type { Lifecycle } from './lifecycle.js';

/** The version each process registers with (doctor warns while two run together). */
export function appVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

export async function joinAsMember(
  db: Database,
  config: Config,
  log: Logger,
  life: Lifecycle,
  member: { id: string; channel: string },
  chatStops: ChatStops,
): Promise<ClusterMember> {
  const joined = await joinCluster(db, {
    id: member.id,
    leaseMs: config.database.leaseMs,
    version: appVersion(),
    log: componentLogger(log, 'Cluster'),
    channel: member.channel,
    // That process runs the chat's open entries again: what runs or waits here is handed over
    // quietly (nothing sent, saved or closed), not stopped as by /stop (stop.ts `handOver`).
    onChatsLost: (chats) => {
      for (const chat of chats) {
        const out = chatStops.handOver(chatKey(chat));
        log.info({ session: chatKey(chat), ...out }, 'a chat taken by another process: handed over');
      }
    },
  });
  // Closed after the claim runner stopped and the stores closed (added later, so closed first) and before the database.
  life.add({ name: 'cluster', close: () => joined.stop() });
  return joined;
}

export interface ClaimsWiring {
  /** For the intake (IntakeDeps.cluster). */
  intake: IntakeCluster;
  /**
   * Starts running claimed chats once the channel gives the way back to them (main's `recover`).
   * `takeOver` (the channel's): before the way back to a message whose handling began before —
   * here or in a process that died —, what was shown of its answer becomes this process's.
   */
  start(
    run: (entry: ClaimedEntry, reply: Reply) => Promise<void>,
    replyFor: (msg: InboundMessage) => Reply,
    takeOver?: ((msg: InboundMessage) => Promise<void>) | undefined,
  ): void;
  /** Runs `task` as the chat's holder (ClaimRunner.asHolder); `fresh`: its session may have changed in another process. */
  asHolder<T>(chat: Chat, task: (fresh: boolean) => Promise<T>): Promise<T>;
  /**
   * Resolves once no message of `channel`'s chats is open in the journal (answered, whichever
   * process ran it), this process stops, or the database does not answer. In a cluster the
   * intake only journals, so a piped terminal's end of input waits for this before the daemon
   * stops: a stop stops claiming, and what it had not claimed yet would be left to other
   * processes — a script's lines unanswered.
   */
  settled(channel: string): Promise<void>;
}

export async function runClaims(
  db: Database,
  member: ClusterMember,
  chatStops: ChatStops,
  opts: { config: Config; log: Logger; life: Lifecycle; orphans?: (() => Promise<void>) | undefined },
): Promise<ClaimsWiring> {
  const log = componentLogger(opts.log, 'Cluster');
  let handler: ((entry: ClaimedEntry) => Promise<void>) | undefined;
  // What a dead process's last turns derive (its session log lines: note lines, index rows) is
  // written by a process still running — before a chat taken over from it runs here, and every
  // lease time for a process that died between turns — not only at the next start. One at a time.
  let orphaning: Promise<void> | undefined;
  const orphans = (): Promise<void> =>
    opts.orphans
      ? (orphaning ??= opts
          .orphans()
          .catch((err: unknown) => log.warn({ err }, "could not write what a stopped process's last turns derive; tried again later"))
          .finally(() => (orphaning = undefined)))
      : Promise.resolve();
  let orphanTimer: NodeJS.Timeout | undefined;
  let prepare: ((batch: ClaimedEntry[]) => Promise<void>) | undefined;
  const runner = new ClaimRunner(member.claims, {
    run: (entry) => handler!(entry),
    prepare: (batch) => prepare?.(batch) ?? Promise.resolve(),
    maxChats: opts.config.maxConcurrentTurns,
    idleMs: IDLE_MS,
    log,
  });
  const stops = await ClusterStops.open(db, member.claims, (key, by) => chatStops.stop(key, by), { log });
  let started = false;
  let stopping = false;
  opts.life.add({
    name: 'chat claims',
    // The chats under way end first (bounded like the dispatcher's drain); then the member's row goes and its claims are free.
    stop: async () => {
      stopping = true;
      clearInterval(orphanTimer);
      if (!started) return true;
      await orphaning;
      const ended = await Promise.race([
        runner.stop().then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), opts.config.shutdownTimeoutMs).unref()),
      ]);
      return ended;
    },
    close: () => stops.close(),
  });
  return {
    intake: {
      accepted: () => runner.poke(),
      // By this process's own clock (ChatClaims.holds): false once a renewal is overdue past the
      // lease, as after a freeze — the chat may be another's, so what runs of it is handed over.
      fence: (msg, key) => {
        if (member.claims.holds({ channel: msg.channel, chatId: msg.chatId })) return;
        const out = chatStops.handOver(key);
        log.warn({ session: key, ...out }, 'this process may no longer hold the chat (its claim was not renewed in time): handed over before saving');
      },
      stop: async (msg, key) => (await stops.stop({ channel: msg.channel, chatId: msg.chatId }, key, { userId: msg.userId, role: msg.role })).outcome,
    },
    asHolder: (chat, task) => runner.asHolder(chat, task),
    async settled(channel) {
      while (!stopping) {
        try {
          if ((await member.claims.openIn(channel)) === 0) return;
        } catch (err) {
          // The database does not answer (past its own retries): nothing could run them now
          // anyway. They stay open in the journal, for the next start or another process.
          log.warn({ err }, 'could not read what is left to answer; stopping with it kept in the journal');
          return;
        }
        await sleep(IDLE_MS);
      }
    },
    start(run, replyFor, takeOver) {
      orphanTimer = setInterval(() => void orphans(), opts.config.database.leaseMs);
      orphanTimer.unref();
      // A batch taken over from a dead process: what its last turns derive is written first, and
      // what it showed of an answer becomes this process's (a failure only costs the old
      // placeholder: the answer goes out as a new message). The batch then goes to the intake at once, in order.
      prepare = async (batch) => {
        if (batch.some((e) => e.takenOver)) await orphans();
        for (const e of batch)
          if (e.attempt > 0 && takeOver)
            await takeOver(e.msg).catch((err: unknown) => log.warn({ err }, 'could not take over what a stopped process showed of an answer'));
      };
      handler = (entry) => run(entry, replyFor(entry.msg));
      started = true;
      runner.start();
    },
  };
}

/** Between two looks for work when no message was accepted here (another process's messages are found this often). */
const IDLE_MS = 250;
