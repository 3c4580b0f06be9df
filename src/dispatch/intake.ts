/**
 * The path of every inbound message, in one place:
 *   journal (inbox.ts) → the chat's queue (dispatcher.ts) → clean → policy (empty, given up
 *   after restarts, flood and budget limits) → a command or a pipeline turn (turn-run.ts)
 * and then, for every message whatever happened, `settle`: the one failure wrap, the one place
 * a journal entry is closed, and the one place the user hears what went wrong.
 *
 * A message's journal entry stays open until its words are in the session (or it needed no
 * session): a kill in between leaves it to `recover` at the next start. The items of an album
 * are journaled one by one and answered together (albums.ts).
 */
import type { Logger } from '../core/log.js';
import { isAppError } from '../core/errors.js';
import type { Config } from '../config/env.js';
import type { SessionStore } from '../sessions/store.js';
import type { SessionWriter } from '../sessions/writer.js';
import { newTurnId, type CallJournal } from '../turn/turn.js';
import type { InboundMessage } from '../core/message.js';
import { chatKey } from '../core/chat.js';
import { cleanInboundText } from '../turn/inbound.js';
import type { HandleResult, Reply, ReplyButton } from '../core/channel.js';
import { parseCommand } from '../core/command-line.js';
import type { CommandRouter } from './router.js';
import type { TokenBudget } from '../features/usage/budget.js';
import type { Dispatcher } from '../queue/dispatcher.js';
import { ANSWER_MARK, argumentsHash, REPLY_MARK, type Inbox, type InboxEntry } from '../queue/inbox.js';
import type { ChatLimits } from './limits.js';
import { apologyText } from './apology.js';
import { runTurn, type TurnRunDeps } from './turn-run.js';
import type { Ending } from './ending.js';
import { AlbumCollector, mergeAlbum } from './albums.js';
import { ChatStops, type StopHandle, type StopOutcome } from './stop.js';
import { isStop } from '../core/command-line.js';

/**
 * A message whose handling started this many times without finishing is not handled again: it
 * is run once more after a restart, and a second death while it runs is taken as its doing (the
 * tool a run died in is not run again anyway: features/answer/loop.ts). So no one message can take
 * the daemon, and every chat with it, down more than twice.
 */
export const MAX_RECOVERY_ATTEMPTS = 2;

const EMPTY_TEXT = 'Your message had no readable text (only control characters or spaces), so nothing was sent to the model. Please type it again.';
/** A message the channel could not read (a sticker, a video…): what the bot reads instead. */
const unreadableText = (what: string) => `I can read text, voice messages and photos, not ${what}, so nothing was sent to the model. Please say it in words.`;

export interface IntakeDeps extends TurnRunDeps {
  config: Pick<Config, 'maxMessageChars' | 'turnTimeoutMs' | 'rateLimitPerMinute' | 'dailyTokenBudget' | 'albumWaitMs'>;
  inbox: Inbox;
  dispatcher: Dispatcher;
  limits: ChatLimits;
  sessions: SessionStore;
  budget: Pick<TokenBudget, 'blocks' | 'refusal'>;
  commands: CommandRouter;
  /** What each chat has under way, for /stop (stop.ts); unset: one of its own (wording without group admins). */
  stops?: ChatStops | undefined;
  /**
   * Several processes on one database (app/cluster.ts, docs/cluster.md): a message accepted here
   * is journaled only — the process holding its chat's claim runs it (`handle` with the entry as
   * recovered) — and /stop goes to whichever process runs the chat's turn.
   */
  cluster?: IntakeCluster | undefined;
  log: Logger;
}

export interface IntakeCluster {
  /** A message was journaled here: look for work now. */
  accepted(): void;
  /** Stops what runs of the chat (session key `key`), in whichever process runs it. */
  stop(msg: InboundMessage, key: string): Promise<StopOutcome>;
  /** Before a turn saves what the model said: hands the chat over here if this process may no longer hold it (turn-run.ts). */
  fence(msg: InboundMessage, key: string): void;
}

/** A message's journal entry as accept (or adopt) gives it. */
type Journaled = ReturnType<Inbox['accept']>;

/** One message being handled. */
interface Job {
  key: string;
  journalId: string;
  reply: Reply;
  release: () => void;
  /** Set once the message is known to be a command (for the failure log line). */
  command?: string;
  /** An album's further items, answered with this one: their entries close with its entry. */
  alsoClose?: string[];
  /** Its place among what the chat has under way (/stop marks or stops it). */
  stop?: StopHandle;
  /** The buttons a command put under its reply (CommandContext.buttons). */
  buttons?: ReplyButton[][];
}

export class Intake {
  /** Entries an earlier run accepted and did not finish, taken over at construction. */
  private leftOver: InboxEntry[] = [];
  private readonly albums: AlbumCollector;
  private readonly stops: ChatStops;

  private constructor(private readonly deps: IntakeDeps) {
    this.albums = new AlbumCollector(deps.config.albumWaitMs);
    this.stops = deps.stops ?? new ChatStops();
  }

  /**
   * Reads and takes over what the last run left open — before any channel starts: a new message
   * finishing first would otherwise find nothing open and empty the journal, and could overtake
   * older ones of its chat.
   */
  static async open(deps: IntakeDeps): Promise<Intake> {
    const intake = new Intake(deps);
    // Several processes: what is open in the journal is run by the process that claims its chat
    // (a dead process's chats included), never taken over here at start.
    if (deps.cluster) return intake;
    const left = await deps.inbox.unfinished();
    for (const e of left.entries) deps.inbox.adopt(e.id);
    await deps.inbox.close(left.duplicates);
    intake.leftOver = left.entries;
    return intake;
  }

  /** The unfinished messages `recover` will handle. */
  leftOverMessages(): InboundMessage[] {
    return this.leftOver.map((e) => e.msg);
  }

  /**
   * Handles messages accepted before the last stop (or kill) that never reached the session or
   * never got an answer; `replyFor` gives the way back to each one's chat. Returns how many.
   */
  recover(replyFor: (msg: InboundMessage) => Reply): Promise<number> {
    const entries = this.leftOver.splice(0);
    // Queued at once (no await before): ahead of anything the channel takes after its start.
    // Each in its chat's queue, in order. Only starts count towards giving up: a message that
    // waited in its queue while the daemon was killed again and again is never given up on.
    if (entries.length > 0) this.deps.log.warn({ messages: entries.length }, 'handling messages accepted before the last stop but not finished');
    return Promise.all(entries.map((e) => this.handle(e.msg, replyFor(e.msg), e))).then(() => entries.length);
  }

  /**
   * Queues one inbound message for its chat; resolves when it has been fully handled. Its
   * `accepted` resolves as soon as the message is journaled (durable). `recovered`: an entry an
   * earlier run journaled and did not finish; it keeps its id.
   */
  handle(msg: InboundMessage, reply: Reply, recovered?: InboxEntry): HandleResult {
    const { inbox, dispatcher, limits, log, cluster } = this.deps;
    const key = chatKey(msg);
    if (cluster && !recovered) return this.acceptOnly(key, msg, reply, cluster);
    // Journal first: a kill while the message waits in its queue loses nothing. The fsync runs
    // while the turn starts (it is hidden behind the LLM call); nothing is sent to the user
    // before it completes, so a message answered is always a message the journal holds.
    // A recovered message is already there: it is not written again, so a kill during recovery
    // cannot leave two open copies of it (they would double with every such kill).
    const journaled: Journaled = recovered ? inbox.adopt(recovered.id) : inbox.accept(msg);
    if (journaled.copyOf) return this.copy(key, msg, journaled);
    // Never behind the turn it stops, nor refused by the limits meant to protect that turn.
    if (!recovered && isStop(msg.text)) return this.stopNow(key, msg, reply, journaled);
    const album = msg.albumId ? AlbumCollector.keyOf(key, msg.albumId) : undefined;
    // Flood limits: not for recovered messages (taken before), nor the operator's terminal, nor
    // the further items of an album (the album counts as the one message it is answered as).
    const joins = album !== undefined && this.albums.isOpen(album);
    const verdict = recovered || joins || msg.channel === 'console' ? 'ok' : limits.admit(key, dispatcher.queued(key));
    // A refused message is not kept anyway; one that is handled says it could not be journaled.
    const { job, accepted } = this.journal(key, journaled, reply, verdict !== 'queue' ? 'an inbound message' : undefined);
    if (album && verdict !== 'queue')
      this.albums.add(album, {
        journalId: job.journalId,
        msg,
        attempt: recovered?.attempt ?? 0,
        interrupted: recovered?.interrupted ?? [],
        completed: recovered?.completed ?? [],
        durable: accepted,
      });
    let done: HandleResult;
    if (verdict === 'queue') {
      // Refused at once, outside the chat's queue (that is what is full), and not kept: the user
      // is told to send it again. Journaled and closed like any other, so a kill before the
      // refusal leaves it to be handled after the restart.
      log.warn({ code: 'chat.rate_limited', session: key, queued: dispatcher.queued(key) }, 'too many messages waiting in one chat; refused one');
      done = accepted.then(() => this.settle(job, async () => ({ close: true, say: limits.queueText() })));
    } else {
      const stop = (job.stop = this.stops.enter(key, msg.userId));
      done = dispatcher.submit(key, (release) => {
        job.release = release;
        return this.settle(job, () => this.decide(job, msg, verdict === 'rate', recovered)).finally(() => this.stops.leave(key, stop));
      });
    }
    done.accepted = accepted;
    return done;
  }

  /**
   * Several processes: the flood limit is decided here, where the message arrives (the process
   * that runs it takes it as recovered, past the limits); a message over it is refused without
   * being journaled — the journal's open entries are any process's to run. Then the message is
   * journaled and the processes look for work. /stop is not journaled: it is answered at once,
   * from wherever the chat's turn runs (a kill before the answer loses only that answer).
   */
  private acceptOnly(key: string, msg: InboundMessage, reply: Reply, cluster: IntakeCluster): HandleResult {
    const { inbox, limits, log } = this.deps;
    if (isStop(msg.text)) {
      const stopped: HandleResult = cluster.stop(msg, key).then(async (outcome) => {
        const say = this.stops.reply(key, outcome);
        log.info({ session: key, ...outcome, answered: say !== undefined }, '/stop');
        if (say !== undefined)
          await reply.send({ kind: 'text', text: say }).catch((err: unknown) => log.error({ err, session: key }, 'could not answer a /stop'));
      });
      stopped.accepted = Promise.resolve(null);
      return stopped;
    }
    const verdict = msg.channel === 'console' ? 'ok' : limits.admit(key, 0);
    if (verdict !== 'ok') {
      log.warn({ code: 'chat.rate_limited', session: key }, 'a chat sent more messages in a minute than the limit; refused one');
      const command = parseCommand(msg.text)?.name;
      const refused: HandleResult = reply
        .send({ kind: 'text', text: command ? limits.rateText(key, command) : limits.refusedText(key) })
        .catch((err: unknown) => log.error({ err, session: key }, 'could not tell a chat its message was refused'));
      refused.accepted = Promise.resolve(null);
      return refused;
    }
    const journaled = inbox.accept(msg);
    if (journaled.copyOf) return this.copy(key, msg, journaled);
    let failure: unknown;
    const accepted = journaled.durable.then(
      () => {
        cluster.accepted();
        return journaled.id;
      },
      (err: unknown) => {
        failure = err;
        return null;
      },
    );
    // Not journaled, nobody can run it: the user hears it failed (with an error id), as for any failure.
    const done: HandleResult = accepted.then(async (id) => {
      if (id !== null) return;
      const job: Job = { key, journalId: '', reply, release: () => undefined };
      await this.tell(job, undefined, this.failed(job, failure), false);
    });
    done.accepted = accepted;
    return done;
  }

  /** The message's policy: what handling it means. Runs in the chat's queue. */
  private async decide(job: Job, item: InboundMessage, overRate: boolean, recoveredItem: InboxEntry | undefined): Promise<Ending> {
    const { config, inbox, limits, budget, log } = this.deps;
    // Its chat went to another process while it waited (stop.ts `handOver`): left open there, unsaved here.
    if (job.stop?.handedOver) return { close: false };
    await inbox.started(job.journalId);
    this.deps.sessions.names.note(item.channel, item.chatId, item.chat);
    const album = item.albumId ? await this.collectAlbum(job, item, recoveredItem) : { msg: item, recovered: recoveredItem };
    // Taken by an album answered (or being answered) with an earlier item: its entry closes with that one.
    if (!album) return { close: false };
    const { msg: raw, recovered } = album;
    const cleaned = cleanInboundText(raw.text, config.maxMessageChars);
    const msg = { ...raw, text: cleaned.text };
    if (cleaned.truncated > 0) log.info({ session: job.key, truncated: cleaned.truncated }, 'inbound message over MAX_MESSAGE_CHARS; truncated');
    if (msg.text.trim() === '') return { close: true, say: raw.unreadable ? unreadableText(raw.unreadable) : EMPTY_TEXT };
    const cmd = parseCommand(msg.text);
    // The chat's session, loaded once for this message: whatever handles it writes through this.
    const writes = this.deps.sessions.writer(await this.deps.sessions.getOrCreate(msg.channel, msg.chatId));
    if (job.stop?.handedOver) return { close: false };
    // Skipped by a /stop while it waited: its words are kept, unanswered and without a reply.
    if (job.stop?.stopped) return this.unanswered(writes, msg, cmd !== null);
    if (recovered && recovered.attempt >= MAX_RECOVERY_ATTEMPTS) {
      // It may be what kills the daemon: not handled again. Its words are saved in the session
      // (until now only the journal held them) and the user is told, so nothing vanishes without a word.
      log.error({ session: job.key, sourceId: msg.messageId }, 'a message did not finish after several restarts; not retried again');
      return this.unanswered(
        writes,
        msg,
        cmd !== null,
        cmd
          ? `/${cmd.name} failed ${MAX_RECOVERY_ATTEMPTS} times in a row (the bot restarted each time), so I stopped trying. Please run it again.`
          : `Answering your message failed ${MAX_RECOVERY_ATTEMPTS} times in a row (the bot restarted each time), so I stopped trying. It is saved; send it again if you still need an answer.`,
      );
    }
    if (overRate) {
      // In the chat's queue, so the words land in the session in order; no LLM call.
      log.warn(
        { code: 'chat.rate_limited', session: job.key, perMinute: config.rateLimitPerMinute },
        'a chat sent more messages in a minute than the limit; saved one without answering',
      );
      return this.unanswered(writes, msg, cmd !== null, limits.rateText(job.key, cmd?.name));
    }
    if (!cmd && (await budget.blocks(job.key, msg))) {
      // DAILY_TOKEN_BUDGET used up: the message is kept in the session, never sent to the model.
      log.info({ session: job.key, budget: config.dailyTokenBudget }, 'daily token budget used up; message saved, not sent to the model');
      return this.unanswered(writes, msg, false, await budget.refusal(job.key));
    }
    if (cmd) {
      job.command = cmd.name;
      if (job.stop) job.stop.command = cmd.name;
      // Closed before it runs: a command is not run again after a restart.
      return { close: true, say: () => this.runCommand(writes, msg, job, cmd.name, cmd.args) };
    }
    const ending = await runTurn(this.deps, writes, msg, job.reply, cleaned.truncated, recovered !== undefined, job.stop, this.callJournal(job, recovered));
    if (!ending.handedOver) return ending;
    // The user's words it recorded are not saved: this process's copy of the session is dropped
    // once the turn wound down, so the chat is read afresh if it comes back here.
    const { windDown } = ending;
    return { ...ending, windDown: async () => (await windDown?.(), this.deps.sessions.discard?.(msg.channel, msg.chatId)) };
  }

  /** Where the turn's tool loop marks each call under the message's journal entry (see inbox.ts). */
  private callJournal(job: Job, recovered: InboxEntry | undefined): CallJournal {
    const { inbox, log } = this.deps;
    // A mark that cannot be written costs only the protection it gives: the call runs anyway.
    const mark = (write: Promise<void>) => write.catch((err: unknown) => log.warn({ err, session: job.key }, 'could not mark a tool call in the journal'));
    // The calls earlier runs ended, each told to this run once (`ranBefore`).
    const completed = [...(recovered?.completed ?? [])];
    return {
      interrupted: recovered?.interrupted ?? [],
      ranBefore: (tool) => {
        const i = completed.findIndex((c) => c.tool === tool);
        if (i < 0) return false;
        completed.splice(i, 1);
        return true;
      },
      hash: argumentsHash,
      started: (call) => mark(inbox.callStarted(job.journalId, call.name, call.arguments)),
      ended: () => mark(inbox.callEnded(job.journalId)),
      answering: () => mark(inbox.callStarted(job.journalId, ANSWER_MARK, '')),
      replying: () => mark(inbox.callStarted(job.journalId, REPLY_MARK, '')),
      answerUnsent: recovered?.interrupted.at(-1)?.tool === ANSWER_MARK,
    };
  }

  /**
   * The job of a journaled message: its reply waits until the journal entry is durable
   * (`accepted`: its id, or null when the write failed — logged as `what`, unless undefined).
   */
  private journal(key: string, journal: { id: string; durable: Promise<unknown> }, reply: Reply, what: string | undefined) {
    const accepted = journal.durable.then(
      () => journal.id,
      (err: unknown) => {
        if (what) this.deps.log.warn({ err, session: key }, `could not journal ${what}; handling it anyway`);
        return null;
      },
    );
    const job: Job = { key, journalId: journal.id, reply: whenTaken(reply, accepted), release: () => undefined };
    return { job, accepted };
  }

  /**
   * /stop, at once and outside the chat's queue (stop.ts): journaled and closed like any message,
   * so a kill before the answer handles it after the restart (where, nothing running, it says so).
   */
  private stopNow(key: string, msg: InboundMessage, reply: Reply, journaled: Journaled): HandleResult {
    const { job, accepted } = this.journal(key, journaled, reply, 'a /stop');
    job.command = 'stop';
    const { stops } = this;
    const outcome = stops.stop(key, { userId: msg.userId, role: msg.role });
    // One that did nothing is answered once a minute per chat (stop.ts): no flood of replies.
    const say = stops.reply(key, outcome);
    this.deps.log.info({ session: key, ...outcome, answered: say !== undefined }, '/stop');
    const done: HandleResult = this.settle(job, async () => ({ close: true, say }));
    done.accepted = accepted;
    return done;
  }

  /**
   * A copy of a message the journal holds (the channel sent it again: Telegram does when a kill
   * came before the update id was recorded), recorded closed by the journal: its message is
   * answered, given up, refused or under way under its first entry. Not handled again, and
   * nothing is said: a message given up after restarts stays given up (it may be what kills
   * the daemon), and none is answered twice.
   */
  private copy(key: string, msg: InboundMessage, journaled: Journaled): HandleResult {
    this.deps.log.info(
      { session: key, sourceId: msg.messageId, entry: journaled.copyOf },
      'a copy of a message the journal already holds (the channel sent it again); not handled again',
    );
    const accepted = journaled.durable.then(
      () => journaled.id,
      () => null,
    );
    const done: HandleResult = accepted.then(() => undefined);
    done.accepted = accepted;
    return done;
  }

  /**
   * An album item at the front of its chat's queue: the first one collects the album (once it
   * has been quiet for ALBUM_WAIT_MS) and stands for all of it; the others were taken with it.
   */
  private async collectAlbum(
    job: Job,
    item: InboundMessage,
    recovered: InboxEntry | undefined,
  ): Promise<{ msg: InboundMessage; recovered: InboxEntry | undefined } | undefined> {
    if (this.albums.wasTaken(job.journalId)) return undefined;
    const items = await this.albums.collect(AlbumCollector.keyOf(job.key, item.albumId!), job.journalId);
    if (items.length === 0) return { msg: item, recovered };
    job.alsoClose = items.map((i) => i.journalId).filter((id) => id !== job.journalId);
    // Nothing is answered before every item it answers is journaled (each item's own rule).
    await Promise.all(items.map((i) => i.durable));
    const msg = mergeAlbum(items);
    if (items.length > 1) this.deps.log.info({ session: job.key, items: items.length, images: msg.images?.length ?? 1 }, 'album collected into one message');
    // Counts towards giving up like its most-restarted item: an album that kills the daemon is given up on as a whole.
    const attempt = Math.max(...items.map((i) => i.attempt));
    const interrupted = items.flatMap((i) => i.interrupted ?? []);
    const completed = items.flatMap((i) => i.completed ?? []);
    return { msg, recovered: recovered || attempt > 0 ? { id: job.journalId, attempt, interrupted, completed, msg } : undefined };
  }

  private async runCommand(writes: SessionWriter, msg: InboundMessage, job: Job, name: string, args: string): Promise<string> {
    const cmd = this.deps.commands.find(name);
    if (!cmd) return `Unknown command /${name}. Send /help to see what I understand.`;
    const role = msg.role ?? 'member';
    const refused = this.deps.commands.refusal(cmd, args, role);
    if (refused) {
      this.deps.log.info({ session: job.key, command: name, role }, "command refused: not open to the sender's role; nothing run");
      return refused;
    }
    return cmd.run({
      inbound: msg,
      session: writes.session,
      writes,
      args,
      role,
      log: this.deps.log,
      document: job.reply.documents ? (document) => job.reply.send({ kind: 'document', document }) : undefined,
      buttons: job.reply.buttons ? (rows) => (job.buttons = rows) : undefined,
    });
  }

  /**
   * A message closed without a turn (given up on, over the rate limit or the budget, skipped by
   * /stop): its words are saved in the session (unless it is a command, or already there), then
   * the user gets `text`, if any.
   */
  private async unanswered(writes: SessionWriter, msg: InboundMessage, command: boolean, text?: string): Promise<Ending> {
    if (!command) {
      const received = writes.receive(msg);
      if (received.answered || received.passed) return { close: true };
      if (received.fresh) await writes.commit();
    }
    return text === undefined ? { close: true } : { close: true, say: text };
  }

  /**
   * Ends the handling of one message, whatever happened: the one failure wrap (anything not
   * caught by the pipeline's own wrap point, e.g. a session that could not be saved), the one
   * place a journal entry is closed, and the one place the user is told.
   */
  private async settle(job: Job, decide: () => Promise<Ending>): Promise<void> {
    let ending: Ending | undefined;
    let say: string | undefined;
    let failure: Ending['failure'];
    try {
      ending = await decide();
      if (ending.close) await this.deps.inbox.done(job.journalId, job.alsoClose);
      if (ending.release) job.release();
      failure = ending.failure;
      if (!failure) say = typeof ending.say === 'function' ? await ending.say() : ending.say;
    } catch (err) {
      failure = this.failed(job, err);
    }
    await this.tell(job, say, failure, ending?.quiet === true);
    if (ending?.windDown)
      await ending.windDown().catch((err: unknown) => this.deps.log.error({ err, session: job.key }, 'a stopped turn did not wind down cleanly'));
  }

  /** Logs a failure with a fresh error id for the user to quote. */
  private failed(job: Job, err: unknown): { errorId: string; code: string | undefined } {
    const errorId = newTurnId();
    const code = isAppError(err) ? err.code : undefined;
    if (job.command) this.deps.log.error({ err, errorId, command: job.command, session: job.key }, `command /${job.command} failed`);
    else this.deps.log.error({ err, errorId, session: job.key }, 'message could not be handled');
    return { errorId, code };
  }

  /** Sends `say`, or the apology for `failure`; a reply that fails is followed by one apology (unless quiet). */
  private async tell(job: Job, say: string | undefined, failure: Ending['failure'], quiet: boolean): Promise<void> {
    if (say !== undefined) {
      try {
        await job.reply.send({ kind: 'text', text: say, ...(job.buttons ? { buttons: job.buttons } : {}) });
        return;
      } catch (err) {
        if (quiet) {
          this.deps.log.error({ err, session: job.key }, 'could not deliver the deadline apology');
          return;
        }
        failure = this.failed(job, err);
      }
    }
    if (!failure) return;
    await job.reply
      .send({ kind: 'text', text: apologyText(failure.errorId, failure.code) })
      .catch((err: unknown) => this.deps.log.error({ err, errorId: failure.errorId }, 'could not deliver the apology either'));
  }
}

/** The way back, every value of it waiting until the message is durable in the journal. */
function whenTaken(reply: Reply, accepted: Promise<unknown>): Reply {
  return {
    documents: reply.documents,
    // The channel's preview starts only once the message is journaled (see TelegramChannel.route).
    progress: reply.progress,
    buttons: reply.buttons,
    sent: reply.sent,
    async send(out) {
      await accepted;
      await reply.send(out);
    },
  };
}
