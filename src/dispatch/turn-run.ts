/**
 * One pipeline turn for a message the intake (intake.ts) decided to answer: the user's words
 * are recorded (not twice: a recovered or redelivered message may be in the session already),
 * the pipeline runs under TURN_TIMEOUT_MS, and what the turn leaves owed is committed. Returns
 * how the message's handling ends; the intake closes the journal entry and tells the user.
 */
import type { Config } from '../config/env.js';
import type { Logger } from '../core/log.js';
import { AppError } from '../core/errors.js';
import type { ActiveModel } from '../llm/chat-models.js';
import { makeMessage, type Session } from '../sessions/model.js';
import { createTurn, endTurn, type CallJournal, type Turn } from '../turn/turn.js';
import type { SessionWriter } from '../sessions/writer.js';
import { answerOf } from '../sessions/received.js';
import { stoppedText, type StopHandle } from './stop.js';
import type { InboundMessage } from '../core/message.js';
import type { Reply } from '../core/channel.js';
import { deadlineText } from './apology.js';
import type { Ending } from './ending.js';

export interface TurnRunDeps {
  config: Pick<Config, 'maxMessageChars' | 'turnTimeoutMs'>;
  pipeline: { run(turn: Turn): Promise<void> };
  /** After every turn: its measurements (for /status and the next request's fit). */
  measured: (turn: Turn) => void;
  /**
   * Several processes (docs/cluster.md): before a turn saves what the model said, hands the chat
   * (session key) over if this process may no longer hold it. Unset: one process.
   */
  cluster?: { fence(msg: InboundMessage, key: string): void } | undefined;
  /** The model a chat answers with (its /model choice, else LLM_MODEL); unset: an unknown model (tests). */
  modelOf?: ((session: Session) => ActiveModel) | undefined;
  log: Logger;
}

/**
 * `writes`: the chat's session writer, the one the intake loaded for this message; `calls`: its
 * journal entry, where the tool loop marks each call (and finds those an earlier run died in).
 */
export async function runTurn(
  deps: TurnRunDeps,
  writes: SessionWriter,
  msg: InboundMessage,
  reply: Reply,
  truncated: number,
  recovered: boolean,
  stop?: StopHandle,
  calls?: CallJournal,
): Promise<Ending> {
  const { config } = deps;
  const session = writes.session;
  // Its chat went to another process while it waited (stop.ts `handOver`): nothing recorded, the entry left open.
  if (stop?.handedOver) return { close: false };
  // A message already in the session (a recovery after a kill, or a channel redelivering an
  // update) is not recorded twice, and not answered twice once its answer is saved — nor once
  // the chat moved on past it (received.ts `passed`: a copy of a message given up after restarts
  // would get the answer to a later one). A new one's words are durable in the journal (accept);
  // they reach the session log in one write with the answer, or at the end of the turn when
  // there is none.
  const received = writes.receive(msg);
  if (received.answered && !received.passed && calls?.answerUnsent) {
    // The run that saved this answer died before handing it to the channel (its entry's last
    // mark is the answer's, not the reply's): the user never got it. Sent now, marked first — at
    // most once, as any answer.
    const saved = answerOf(session.messages, received.message);
    if (saved) {
      await calls.replying();
      await reply.send({ kind: 'text', text: saved.content });
      deps.log.info({ session: session.id, sourceId: msg.messageId }, 'an answer saved before the process stopped had not been sent; sent now');
      return { close: true };
    }
  }
  if (received.answered || received.passed) {
    deps.log.info(
      { session: session.id, recovered, sourceId: msg.messageId },
      received.answered ? 'message already answered; not handled again' : 'a later message came after this one unanswered; not handled again',
    );
    return { close: true };
  }
  const userMessage = received.message;
  if (stop?.stopped) {
    // A /stop came while it waited to start: kept unanswered, like the messages behind it.
    await writes.commit();
    return { close: true };
  }
  const deadline = new AbortController();
  const turn = createTurn({
    inbound: msg,
    writes,
    log: deps.log,
    userMessage,
    reply,
    signal: deadline.signal,
    model: deps.modelOf?.(session),
    calls,
    fence: deps.cluster ? () => deps.cluster!.fence(msg, session.id) : undefined,
  });
  if (truncated > 0) {
    turn.notices.push(`Your message was very long; I read the first ${config.maxMessageChars.toLocaleString('en-US')} characters.`);
  }
  // Words that came with something the bot cannot read (a PDF with a caption): answered, and
  // the user is told the attachment itself was not read (its placeholder tells the model).
  if (msg.unreadable) turn.notices.push(`I can't open ${msg.unreadable} (I read text, voice messages and photos), so I answered from your words only.`);
  // The entry closes only once the turn has run (answered or apologised): a kill mid-turn leaves
  // it open, and the next start runs the turn again without re-recording the message.
  // The session log keeps its lines until this turn's note line and index rows are written
  // (MemoryPersist 50, Indexing 55): after a crash they are rebuilt from it.
  const release = writes.hold();
  const running = deps.pipeline.run(turn);
  void running.finally(release).catch(() => undefined);
  const finish = async () => {
    await running;
    // A turn that ended without an answer (an apology) still keeps the user's words.
    await writes.commit();
    deps.measured(turn);
  };
  let timer: NodeJS.Timeout | undefined;
  let stopped!: (quietly: boolean) => void;
  let settled = false;
  // /stop (stop.ts) ends it through the same controller as the deadline: one way to stop a turn.
  // So does a hand-over to another process (`quietly`), which keeps nothing of it.
  if (stop) {
    stop.stopTurn = (quietly = false) => {
      if (settled || turn.response !== undefined || turn.delivered || deadline.signal.aborted) return 'complete';
      deadline.abort(new AppError(quietly ? 'turn.handed_over' : 'turn.stopped', { chat: session.id }));
      stopped(quietly);
      return turn.streamed.trim() ? 'stopped' : 'stopped-empty';
    };
  }
  // The deadline's timer goes with the turn, also when the pipeline throws past its wrap point:
  // left running it kept the process alive for TURN_TIMEOUT_MS after the turn had ended.
  const outcome = await Promise.race([
    running.then(() => 'done' as const),
    new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), config.turnTimeoutMs))),
    new Promise<'stopped' | 'handed-over'>((resolve) => (stopped = (quietly) => resolve(quietly ? 'handed-over' : 'stopped'))),
  ]).finally(() => clearTimeout(timer));
  if (outcome === 'stopped') return halted(turn, writes, finish);
  if (outcome === 'handed-over') return handedOver(turn, running);
  // Past the deadline with no answer on its way: stop the turn (its LLM call and tools are
  // aborted, and it saves nothing more), close it as any failed turn, and give the slot back.
  // The chat's own queue waits until the stopped work has wound down (bounded by the timeouts
  // of what cannot be aborted, such as a compaction), so the chat never overlaps itself.
  if (outcome === 'late' && turn.response === undefined && !turn.delivered) {
    deadline.abort(new AppError('turn.timeout', { ms: config.turnTimeoutMs }));
    turn.delivered = true; // the notice below is the turn's one reply
    endTurn(turn, 'deadline', `over TURN_TIMEOUT_MS (${config.turnTimeoutMs} ms)`);
    turn.log.warn(
      { code: 'turn.timeout', timeoutMs: config.turnTimeoutMs, systems: turn.timings.map((t) => t.system) },
      'turn stopped at its deadline; the user gets an apology',
    );
    await writes.commit();
    return { close: true, release: true, say: deadlineText(turn.id, config.turnTimeoutMs), quiet: true, windDown: finish };
  }
  await finish();
  settled = true;
  // A system on the reply path failed before anything was sent (the runner logged it).
  if (turn.failure && !turn.delivered) return { close: true, failure: { errorId: turn.failure.errorId, code: turn.failure.code } };
  return { close: true };
}

/**
 * A turn /stop ended (its controller is aborted: the LLM call and tools stop, nothing more of it
 * is saved, MemoryPersist and Indexing do not run). The text streamed so far is the answer it
 * leaves, marked as stopped, in the session and in the chat (a channel's preview is finished
 * with it); with no text, the session gets a short marker and a preview showing a status is
 * ended with one. The slot is given back at once; the chat's queue waits for the wind-down.
 */
async function halted(turn: Turn, writes: SessionWriter, finish: () => Promise<void>): Promise<Ending> {
  endTurn(turn, 'stop', 'stopped by /stop');
  turn.delivered = true;
  const partial = turn.streamed;
  const kept = stoppedText(partial);
  writes.record(makeMessage('assistant', kept, { stopped: true }));
  await writes.commit();
  turn.log.info(
    { code: 'turn.stopped', keptChars: partial.trim() ? partial.length : 0, systems: turn.timings.map((t) => t.system) },
    'turn stopped by /stop; the text so far is kept, marked',
  );
  if (!partial.trim()) await turn.reply.progress?.end?.('⏹ Stopped.');
  return { close: true, release: true, ...(partial.trim() ? { say: kept } : {}), quiet: true, windDown: finish };
}

/**
 * A turn aborted because its chat went to another process (stop.ts `handOver`): that process
 * runs the message again, so nothing of it is kept or shown here — no session write (the
 * user's words stay unsaved: the intake drops this process's copy of the session once it has
 * wound down), nothing sent (a preview stops where it is), and the journal entry left open.
 */
function handedOver(turn: Turn, running: Promise<void>): Ending {
  endTurn(turn, 'cluster', 'the chat went to another process');
  turn.delivered = true;
  turn.reply.progress?.close?.();
  turn.log.info(
    { code: 'turn.handed_over', systems: turn.timings.map((t) => t.system) },
    'turn handed over to the process that took the chat; nothing of it kept here',
  );
  return { close: false, release: true, quiet: true, handedOver: true, windDown: () => running };
}
