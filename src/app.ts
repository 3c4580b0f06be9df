/**
 * Wires one daemon: services → systems → pipeline → dispatcher → commands. Channels hand every
 * inbound message to `handle`, which queues it behind earlier messages of the same chat and
 * then runs either a command or a pipeline turn. main.ts and the tests both build the daemon here.
 */
import path from 'node:path';
import { configSecrets, type Config } from './config/env.js';
import { componentLogger, registerSecret, type Logger } from './log.js';
import { SessionStore } from './sessions/store.js';
import { makeMessage, sessionKey } from './sessions/model.js';
import { LlmClient } from './llm/client.js';
import { lookupModel } from './llm/catalogue.js';
import { createTokenCounter } from './llm/tokens.js';
import { ToolRegistry } from './tools/registry.js';
import { createDateTimeTool } from './tools/datetime.js';
import { Pipeline, apologyText, deadlineText } from './pipeline/runner.js';
import { createTurn, endTurn, newTurnId, type InboundMessage } from './pipeline/turn.js';
import { cleanInboundText } from './pipeline/inbound.js';
import { InstructionsSource } from './context/instructions.js';
import { createContextBuildingSystem } from './systems/context-building.js';
import { createToolLoopSystem } from './systems/tool-loop.js';
import { createResponseDeliverySystem } from './systems/response-delivery.js';
import { Dispatcher } from './dispatch/dispatcher.js';
import { Inbox, type InboxEntry } from './dispatch/inbox.js';
import { ChatLimits } from './dispatch/limits.js';
import type { HandleResult, ReplyFn } from './channels/types.js';
import type { SessionMessage } from './sessions/model.js';
import { CommandRouter, parseCommand } from './commands/router.js';
import { createHelpCommand } from './commands/help.js';
import { createNewCommand } from './commands/new.js';
import { createStatusCommand } from './commands/status.js';
import type { Command } from './commands/types.js';
import { TurnStats } from './stats.js';
import { contextLimit, type Services } from './services.js';
import { RuntimeConfigStore } from './config/runtime.js';
import { MemoryService } from './memory/service.js';
import { createMemorySection } from './context/memory-section.js';
import { createMemoryPersistSystem } from './systems/memory-persist.js';
import { createMemoryFileTools } from './tools/memory-files.js';
import { createMemoryCommand } from './commands/memory.js';
import { createForgetCommand } from './commands/forget.js';
import { createExportCommand } from './commands/export.js';
import { ForgetService } from './memory/forget.js';
import { AppError } from './errors.js';
import { ConsolidationService } from './memory/consolidation.js';
import { CompactionService } from './memory/compaction.js';
import { AutoCompactor } from './memory/auto-compact.js';
import { createAutoCompactionSystem } from './systems/auto-compaction.js';
import { createCompactCommand } from './commands/compact.js';
import { MemoryIndex } from './index/memory-index.js';
import { Embedder } from './index/embeddings.js';
import { IndexingService } from './index/ingest.js';
import { Upkeep } from './index/upkeep.js';
import { Scheduler } from './scheduler/jobs.js';
import { createIndexingSystem } from './systems/indexing.js';
import { createMemoryIndexTools } from './tools/memory-index.js';
import { createRelevantMemorySection } from './context/relevant-memory.js';
import { ReminderStore } from './reminders/store.js';
import { ReminderService } from './reminders/service.js';
import { createReminderTools } from './tools/reminders.js';
import { createRemindersCommand } from './commands/reminders.js';
import { UsageStore } from './llm/usage.js';
import { TokenBudget } from './llm/budget.js';

export type { ReplyFn } from './channels/types.js';

export interface App {
  services: Services;
  pipeline: Pipeline;
  dispatcher: Dispatcher;
  commands: CommandRouter;
  /**
   * Queues one inbound message for its chat; resolves when it has been fully handled. Its
   * `accepted` resolves as soon as the message is journaled (durable).
   */
  handle(msg: InboundMessage, reply: ReplyFn): HandleResult;
  /**
   * Handles messages accepted before the last stop (or kill) that never reached the session or
   * never got an answer; `replyFor` gives the way back to each one's chat. Returns how many.
   */
  recover(replyFor: (msg: InboundMessage) => ReplyFn): Promise<number>;
  /** Stops taking messages, waits for running turns (bounded), flushes sessions. */
  stop(): Promise<{ drained: boolean }>;
}

export interface AppOptions {
  /** Start the nightly upkeep jobs (the daemon does; tests and CLIs do not). */
  scheduler?: boolean;
  /** The clock reminders use (tests move it forward a day). */
  now?: () => number;
}

/** The session's copy of a recovered message: the newest user message with its source id and text. */
function findRecorded(messages: SessionMessage[], msg: InboundMessage): SessionMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user' && m.sourceId !== undefined && m.sourceId === msg.messageId && m.content === msg.text) return m;
  }
  return undefined;
}

/** True when an assistant answer (not a tool call) follows `user` in the session. */
function answered(messages: SessionMessage[], user: SessionMessage): boolean {
  const i = messages.indexOf(user);
  return messages.slice(i + 1).some((m) => m.role === 'assistant' && !(m.toolCalls && m.toolCalls.length > 0));
}

const MAX_RECOVERY_ATTEMPTS = 3;

function userMessageOf(msg: InboundMessage): SessionMessage {
  return makeMessage('user', msg.text, {
    ...(msg.messageId ? { sourceId: msg.messageId } : {}),
    ...(msg.userName ? { senderName: msg.userName } : {}),
  });
}

export async function createApp(config: Config, log: Logger, opts: AppOptions = {}): Promise<App> {
  // Whoever builds the app (main, a CLI, a test), the key is scrubbed from logs, files and replies.
  for (const s of configSecrets(config)) registerSecret(s);
  const runtime = new RuntimeConfigStore(config.workspaceDir, componentLogger(log, 'Config'));
  const runtimeProblem = runtime.init();
  if (runtimeProblem) throw new AppError('config.invalid', runtimeProblem);
  const dispatcher = new Dispatcher(config.maxConcurrentTurns);
  // A chat's session stays in memory while it has work queued or running (turns hold it).
  const sessions = new SessionStore(path.join(config.workspaceDir, 'sessions'), componentLogger(log, 'Session'), {
    inUse: (id) => dispatcher.busy(id),
  });
  await sessions.init();
  const llm = new LlmClient(config, componentLogger(log, 'LLM'));
  const usage = new UsageStore(path.join(config.workspaceDir, 'usage.db'), config.timezone);
  llm.usageSink = (account, u) => usage.record(account, u);
  const budget = new TokenBudget(usage, config.dailyTokenBudget, config.budgetExemptUsers, config.timezone);
  llm.gate = (account) => budget.pausesBackground(account);
  const memory = new MemoryService(path.join(config.workspaceDir, 'memory'), config.memoryScope);
  const indexLog = componentLogger(log, 'Index');
  const index = new MemoryIndex(path.join(config.workspaceDir, 'memory.db'), indexLog);
  let embedder: Embedder | undefined;
  if (config.embeddingsModel && index.enabled) {
    embedder = new Embedder(llm, index, config.embeddingsModel, config.embeddingsDimensions, indexLog);
    embedder.init();
  }
  const indexing = new IndexingService(index, embedder);
  const upkeep = new Upkeep(index, llm, componentLogger(log, 'Upkeep'), {
    accurateNer: false,
    timeoutMs: config.consolidationTimeoutMs,
    paused: (scope) => llm.gate?.({ chat: scope, kind: 'facts' }) === true,
  });
  const scheduler = new Scheduler(upkeep, config.timezone, componentLogger(log, 'Upkeep'));
  if (opts.scheduler) scheduler.start();
  const reminders = new ReminderService({
    store: new ReminderStore(path.join(config.workspaceDir, 'schedules.db'), componentLogger(log, 'Reminders')),
    sessions,
    memory,
    timezone: config.timezone,
    log: componentLogger(log, 'Reminders'),
    queue: (key, task) => dispatcher.submit(key, task),
    ...(opts.now ? { now: opts.now } : {}),
  });
  // Before any channel starts: a reminder recorded just before a kill is not sent again.
  await reminders.settleClaims();
  const tools = new ToolRegistry(
    [
      createDateTimeTool(config.timezone),
      ...createMemoryFileTools(memory),
      ...createMemoryIndexTools(index, memory, embedder),
      ...createReminderTools(reminders),
    ],
    config.toolTimeoutMs,
  );
  const model = lookupModel(config.model);
  const tokens = await createTokenCounter(model.encoding);
  const stats = new TurnStats();
  const consolidation = new ConsolidationService(
    llm,
    { timeoutMs: config.consolidationTimeoutMs, maxMemorySize: config.maxMemorySize, timezone: config.timezone },
    componentLogger(log, 'Consolidation'),
    (facts, ctx) => {
      for (const f of index.saveFacts(facts.map((content) => ({ content, scope: ctx.scope, sessionId: ctx.sessionId })))) {
        if (!f.duplicateOf) embedder?.enqueue(f.id, f.content);
      }
    },
  );
  const compaction = new CompactionService(
    llm,
    consolidation,
    sessions,
    { summaryTimeoutMs: config.summaryTimeoutMs, summaryMaxTokens: 500, timezone: config.timezone },
    componentLogger(log, 'AutoCompact'),
  );
  const instructions = new InstructionsSource(config.workspaceDir);
  const limit = () => contextLimit({ model, runtime });
  const compactor = new AutoCompactor({
    compaction,
    memory,
    runtime,
    tokens,
    contextLimit: limit,
    toolDefinitions: () => tools.definitions(),
    lastSystemPromptTokens: (id) => stats.lastTurn(id)?.systemPromptTokens,
    systemPromptBound: () => tokens.countText(instructions.cachedText()) + Math.floor((limit() * runtime.get().memory.budgetPercent) / 100),
  });
  const inbox = new Inbox(path.join(config.workspaceDir, 'inbox.jsonl'));
  const forget = new ForgetService({ workspaceDir: config.workspaceDir, memory, index, sessions, journal: inbox, reminders, log: componentLogger(log, 'Forget') });
  const services: Services = {
    config,
    log,
    sessions,
    llm,
    tools,
    tokens,
    model,
    stats,
    memory,
    runtime,
    consolidation,
    compactor,
    index,
    indexing,
    scheduler,
    forget,
    reminders,
    usage,
    budget,
  };

  const pipeline = new Pipeline(
    [
      createAutoCompactionSystem({ compactor, runtime }),
      createContextBuildingSystem({
        instructions,
        sections: [createMemorySection({ memory, runtime, tokens: services.tokens, timezone: config.timezone, contextLimit: limit })],
        turnSections: [createRelevantMemorySection({ index, memory, runtime, tokens, contextLimit: limit, embedder })],
      }),
      createToolLoopSystem({ llm, tools, sessions, maxIterations: config.maxToolIterations, guard: compactor }),
      createResponseDeliverySystem(),
      createMemoryPersistSystem({ memory, runtime, timezone: config.timezone }),
      createIndexingSystem({ indexing, memory, botName: 'assistant' }),
    ],
    log,
  );

  const commandList: Command[] = [createNewCommand(), createCompactCommand(), createStatusCommand(), createMemoryCommand(), createForgetCommand(), createExportCommand(), createRemindersCommand()];
  const router: CommandRouter = new CommandRouter([createHelpCommand(() => router.list()), ...commandList]);

  const limits = new ChatLimits(config.rateLimitPerMinute, config.maxQueuedPerChat);
  // Read and taken over before any channel starts: a new message finishing first would
  // otherwise find nothing open and empty the journal, and could overtake older ones of its chat.
  const leftOver = await inbox.unfinished();
  for (const e of leftOver.entries) inbox.adopt(e.id);
  await inbox.close(leftOver.duplicates);
  // No message prefix here: each system tags its own lines ([Context], [ToolLoop], …).
  const turnLog = log.child({ component: 'Turn' });

  async function runCommand(msg: InboundMessage, reply: ReplyFn, name: string, args: string): Promise<void> {
    const session = await sessions.getOrCreate(msg.channel, msg.chatId);
    const cmd = router.find(name);
    if (!cmd) {
      await reply(`Unknown command /${name}. Send /help to see what I understand.`);
      return;
    }
    try {
      await reply(await cmd.run({ inbound: msg, session, args, services, log: turnLog, document: reply.document }));
    } catch (err) {
      const errorId = newTurnId();
      turnLog.error({ err, errorId, command: name, session: session.id }, `command /${name} failed`);
      await reply(apologyText(errorId, err));
    }
  }

  async function runTurn(msg: InboundMessage, reply: ReplyFn, truncated: number, journalId: string, recovered: boolean, release: () => void): Promise<void> {
    const session = await sessions.getOrCreate(msg.channel, msg.chatId);
    // A message already in the session (a recovery after a kill, or a channel redelivering an
    // update) is not recorded twice, and not answered twice once its answer is saved.
    let userMessage = findRecorded(session.messages, msg);
    if (userMessage && answered(session.messages, userMessage)) {
      await inbox.done(journalId);
      turnLog.info({ session: session.id, recovered, sourceId: msg.messageId }, 'message already answered; not handled again');
      return;
    }
    if (!userMessage) {
      userMessage = userMessageOf(msg);
      session.metadata.messagesReceived++;
      // The user's words are durable in the journal (accept); they reach the session log in
      // one write with the answer, or at the end of the turn when there is none.
      sessions.record(session, userMessage);
    }
    const deadline = new AbortController();
    const turn = createTurn({ inbound: msg, session, log: turnLog, userMessage, reply, signal: deadline.signal });
    if (truncated > 0) {
      turn.notices.push(`Your message was very long; I read the first ${config.maxMessageChars.toLocaleString('en-US')} characters.`);
    }
    // Done only once the turn has run (answered or apologised): a kill mid-turn leaves the
    // journal entry open, and the next start runs the turn again without re-recording the message.
    const running = pipeline.run(turn);
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      running.then(() => false),
      new Promise<true>((resolve) => (timer = setTimeout(() => resolve(true), config.turnTimeoutMs))),
    ]);
    clearTimeout(timer);
    // Past the deadline with no answer on its way: stop the turn (its LLM call and tools are
    // aborted, and it saves nothing more), close it as any failed turn, and give the slot back.
    // The chat's own queue waits until the stopped work has wound down (bounded by the timeouts
    // of what cannot be aborted, such as a compaction), so the chat never overlaps itself.
    if (late && turn.response === undefined && !turn.delivered) {
      deadline.abort(new AppError('turn.timeout', `the turn did not finish within ${config.turnTimeoutMs} ms`));
      turn.delivered = true; // the apology below is the turn's one reply
      endTurn(turn, 'deadline', `over TURN_TIMEOUT_MS (${config.turnTimeoutMs} ms)`);
      turn.log.warn({ code: 'turn.timeout', timeoutMs: config.turnTimeoutMs, systems: turn.timings.map((t) => t.system) }, 'turn stopped at its deadline; the user gets an apology');
      await sessions.commitRecorded(session);
      await inbox.done(journalId);
      release();
      await reply(deadlineText(turn.id, config.turnTimeoutMs)).catch((err: unknown) => turn.log.error({ err }, 'could not deliver the deadline apology'));
    }
    await running;
    // A turn that ended without an answer (an apology) still keeps the user's words.
    await sessions.commitRecorded(session);
    await inbox.done(journalId);
    services.stats.record(session.id, {
      at: Date.now(),
      timings: turn.timings,
      systemPromptTokens: tokens.countText(turn.systemPrompt) + (turn.turnPrompt ? tokens.countText(turn.turnPrompt) + 4 : 0),
      promptSections: turn.promptSections.map((s) => ({ name: s.name, chars: s.content.length })),
      memory: turn.memory,
    });
  }

  /**
   * Closes a message without a turn: its words are saved in the session (unless it is a
   * command, or already there), its journal entry is closed, then the user gets `text`. Used
   * for a message given up on after restarts and for one over the rate limit.
   */
  async function saveUnanswered(msg: InboundMessage, reply: ReplyFn, journalId: string, text: string): Promise<void> {
    if (!parseCommand(msg.text)) {
      const session = await sessions.getOrCreate(msg.channel, msg.chatId);
      const recorded = findRecorded(session.messages, msg);
      if (recorded && answered(session.messages, recorded)) return inbox.done(journalId);
      if (!recorded) {
        session.metadata.messagesReceived++;
        await sessions.append(session, userMessageOf(msg));
      }
    }
    await inbox.done(journalId);
    await reply(text);
  }

  /**
   * A message whose handling started MAX_RECOVERY_ATTEMPTS times without finishing may be what
   * kills the daemon: it is not handled again. Its words are saved in the session (until now
   * only the journal held them) and the user is told, so nothing vanishes without a word.
   */
  async function giveUp(msg: InboundMessage, reply: ReplyFn, journalId: string): Promise<void> {
    const cmd = parseCommand(msg.text);
    turnLog.error({ session: sessionKey(msg.channel, msg.chatId), sourceId: msg.messageId }, 'a message did not finish after several restarts; not retried again');
    await saveUnanswered(
      msg,
      reply,
      journalId,
      cmd
        ? `/${cmd.name} failed ${MAX_RECOVERY_ATTEMPTS} times in a row (the bot restarted each time), so I stopped trying. Please run it again.`
        : `Answering your message failed ${MAX_RECOVERY_ATTEMPTS} times in a row (the bot restarted each time), so I stopped trying. It is saved; send it again if you still need an answer.`,
    );
  }

  /** DAILY_TOKEN_BUDGET used up: the message is kept in the session, never sent to the model. */
  async function refuseOverBudget(msg: InboundMessage, reply: ReplyFn, journalId: string): Promise<void> {
    const key = sessionKey(msg.channel, msg.chatId);
    turnLog.info({ session: key, budget: config.dailyTokenBudget }, 'daily token budget used up; message saved, not sent to the model');
    await saveUnanswered(msg, reply, journalId, budget.refusal(key));
  }

  /**
   * A message over the queue cap: refused at once, outside the chat's queue (that is what is
   * full), and not kept — the user is told to send it again. Journaled and closed like any
   * other, so a kill before the refusal leaves it to be handled after the restart.
   */
  function refuseQueued(msg: InboundMessage, reply: ReplyFn): HandleResult {
    const key = sessionKey(msg.channel, msg.chatId);
    const journal = inbox.accept(msg);
    const accepted = journal.durable.then(
      () => journal.id,
      () => null,
    );
    turnLog.warn({ code: 'chat.rate_limited', session: key, queued: dispatcher.queued(key) }, 'too many messages waiting in one chat; refused one');
    const done: HandleResult = (async () => {
      await accepted;
      await inbox.done(journal.id);
      await reply(limits.queueText());
    })();
    done.accepted = accepted;
    return done;
  }

  /** `recovered`: an entry an earlier run journaled and did not finish; it keeps its id. */
  function handle(msg: InboundMessage, reply: ReplyFn, recovered?: InboxEntry): HandleResult {
    const key = sessionKey(msg.channel, msg.chatId);
    // Flood limits: not for recovered messages (taken before), nor the operator's terminal.
    const verdict = recovered || msg.channel === 'console' ? 'ok' : limits.admit(key, dispatcher.queued(key));
    if (verdict === 'queue') return refuseQueued(msg, reply);
    // Journal first: a kill while the message waits in its queue loses nothing. The fsync runs
    // while the turn starts (it is hidden behind the LLM call); nothing is sent to the user
    // before it completes, so a message answered is always a message the journal holds.
    // A recovered message is already there: it is not written again, so a kill during recovery
    // cannot leave two open copies of it (they would double with every such kill).
    const journal = recovered ? inbox.adopt(recovered.id) : inbox.accept(msg);
    const accepted = journal.durable.then(
      () => journal.id,
      (err: unknown) => {
        turnLog.warn({ err, session: key }, 'could not journal an inbound message; handling it anyway');
        return null;
      },
    );
    const replyWhenTaken: ReplyFn = async (text) => {
      await accepted;
      return reply(text);
    };
    const sendDocument = reply.document;
    if (sendDocument) {
      replyWhenTaken.document = async (doc) => {
        await accepted;
        return sendDocument(doc);
      };
    }
    const journalId = journal.id;
    const done: HandleResult = dispatcher.submit(key, async (release) => {
      try {
        await inbox.started(journalId);
        const cleaned = cleanInboundText(msg.text, config.maxMessageChars);
        msg = { ...msg, text: cleaned.text };
        if (cleaned.truncated > 0) {
          turnLog.info({ session: key, truncated: cleaned.truncated }, 'inbound message over MAX_MESSAGE_CHARS; truncated');
        }
        if (msg.text.trim() === '') {
          await inbox.done(journalId);
          await replyWhenTaken('Your message had no readable text (only control characters or spaces), so nothing was sent to the model. Please type it again.');
          return;
        }
        if (recovered && recovered.attempt >= MAX_RECOVERY_ATTEMPTS) return await giveUp(msg, replyWhenTaken, journalId);
        const cmd = parseCommand(msg.text);
        if (verdict === 'rate') {
          // In the chat's queue, so the words land in the session in order; no LLM call.
          turnLog.warn({ code: 'chat.rate_limited', session: key, perMinute: config.rateLimitPerMinute }, 'a chat sent more messages in a minute than the limit; saved one without answering');
          return await saveUnanswered(msg, replyWhenTaken, journalId, limits.rateText(cmd?.name));
        }
        if (!cmd && budget.blocks(key, msg)) return await refuseOverBudget(msg, replyWhenTaken, journalId);
        if (cmd) {
          await inbox.done(journalId);
          await runCommand(msg, replyWhenTaken, cmd.name, cmd.args);
        } else await runTurn(msg, replyWhenTaken, cleaned.truncated, journalId, recovered !== undefined, release);
      } catch (err) {
        // Anything the pipeline's own wrap point did not catch (e.g. the session could not be
        // saved before the LLM call): the user still hears back, with an id to quote.
        const errorId = newTurnId();
        turnLog.error({ err, errorId, session: key }, 'message could not be handled');
        await replyWhenTaken(apologyText(errorId, err)).catch(() => undefined);
      }
    });
    done.accepted = accepted;
    return done;
  }

  return {
    services,
    pipeline,
    dispatcher,
    commands: router,
    handle(msg, reply) {
      return handle(msg, reply);
    },
    recover(replyFor) {
      const entries = leftOver.entries.splice(0);
      // Queued at once (no await before): ahead of anything the channel takes after its start.
      // Each in its chat's queue, in order. Only starts count towards giving up (see giveUp):
      // a message that waited in its queue while the daemon was killed again and again is
      // never given up on.
      if (entries.length > 0) turnLog.warn({ messages: entries.length }, 'handling messages accepted before the last stop but not finished');
      return Promise.all(entries.map((e) => handle(e.msg, replyFor(e.msg), e))).then(() => entries.length);
    },
    async stop() {
      reminders.stop();
      dispatcher.close();
      const drained = await dispatcher.drain(config.shutdownTimeoutMs);
      await sessions.close();
      await inbox.shutdown();
      await scheduler.stop();
      await embedder?.flush();
      index.close();
      reminders.close();
      usage.close();
      return { drained };
    },
  };
}
