/**
 * Builds the long-lived services of one daemon (stores, LLM client, memory, index, reminders,
 * compaction) in dependency order. Nothing here handles a message: see dispatch/intake.ts.
 */
import path from 'node:path';
import type { Config } from '../config/env.js';
import { componentLogger, type Logger } from '../core/log.js';
import { AppError } from '../core/errors.js';
import { FileRuntimeConfigStore, memoryBudgetTokens } from '../config/runtime.js';
import { FileSessionStore } from '../sessions/file-store.js';
import { LlmClient } from '../llm/client.js';
import { ChatModels, type ActiveModel } from '../llm/chat-models.js';
import type { Session } from '../sessions/model.js';
import { UsageStore } from '../usage/usage.js';
import { TokenBudget } from '../usage/budget.js';
import { ToolRegistry } from '../tools/registry.js';
import { createDateTimeTool } from '../tools/datetime.js';
import { createMemoryFileTools } from '../tools/memory-files.js';
import { createMemoryIndexTools } from '../tools/memory-index.js';
import { createReminderTools } from '../tools/reminders.js';
import { InstructionsSource } from '../context/instructions.js';
import { Dispatcher } from '../queue/dispatcher.js';
import type { Inbox } from '../queue/inbox.js';
import { FileInbox } from '../queue/file-inbox.js';
import { TurnStats } from '../turn/stats.js';
import { chatModel, type Services } from './services.js';
import { FileMemoryService } from '../memory/file-memory.js';
import { ForgetService } from '../privacy/forget.js';
import { ConsolidationService } from '../memory/consolidation.js';
import { CompactionService } from '../memory/compaction.js';
import { ContextFit } from '../turn/context-fit.js';
import { AutoCompactor } from '../turn/auto-compact.js';
import { SqliteMemoryIndex } from '../index/sqlite-memory-index.js';
import { Embedder } from '../index/upkeep/embeddings.js';
import { IndexingService } from '../index/ingest.js';
import { Upkeep } from '../index/upkeep/upkeep.js';
import { Scheduler } from '../scheduler/jobs.js';
import { ReminderStore } from '../reminders/store.js';
import { MediaFetchers } from '../media/attachments.js';
import { ReminderService } from '../reminders/service.js';
import { DailyNotes } from '../memory/daily-notes.js';
import { DerivedWrites } from '../turn/derived.js';

export interface ServiceOptions {
  /** Start the nightly upkeep jobs (the daemon does; tests and CLIs do not). */
  scheduler?: boolean;
  /** The clock reminders use (tests move it forward a day). */
  now?: () => number;
}

/** The services, plus the parts only the systems and the intake use. */
export interface Built {
  services: Services;
  dispatcher: Dispatcher;
  inbox: Inbox;
  instructions: InstructionsSource;
  embedder: Embedder | undefined;
  fit: ContextFit;
  /** The model a chat answers with (services.ts chatModel). */
  modelOf: (session: Session) => ActiveModel;
}

export async function buildServices(config: Config, log: Logger, opts: ServiceOptions): Promise<Built> {
  const runtime = new FileRuntimeConfigStore(config.workspaceDir, componentLogger(log, 'Config'));
  const runtimeProblem = runtime.init();
  if (runtimeProblem) throw new AppError('config.invalid', { problem: runtimeProblem });
  const dispatcher = new Dispatcher(config.maxConcurrentTurns);
  // A chat's session stays in memory while it has work queued or running (turns hold it).
  const sessions = new FileSessionStore(path.join(config.workspaceDir, 'sessions'), componentLogger(log, 'Session'), {
    inUse: (id) => dispatcher.busy(id),
  });
  await sessions.init();
  const llm = new LlmClient(config, componentLogger(log, 'LLM'));
  const usage = new UsageStore(path.join(config.workspaceDir, 'usage.db'), config.timezone, { log: componentLogger(log, 'Usage') });
  llm.usageSink = (account, u, model) => usage.record(account, u, new Date(), model);
  const budget = new TokenBudget(usage, config.dailyTokenBudget, config.budgetExemptUsers, config.timezone);
  llm.gate = (account) => budget.pausesBackground(account);
  const memory = new FileMemoryService(path.join(config.workspaceDir, 'memory'), config.memoryScope);
  const indexLog = componentLogger(log, 'Index');
  const index = SqliteMemoryIndex.inWorkspace(config.workspaceDir, indexLog);
  let embedder: Embedder | undefined;
  if (config.embeddingsModel && index.enabled) {
    embedder = new Embedder(llm, index, config.embeddingsModel, config.embeddingsDimensions, indexLog);
    embedder.init();
  }
  const indexing = new IndexingService(index, embedder);
  const notes = new DailyNotes(memory, config.timezone, componentLogger(log, 'MemoryPersist'));
  const derived = new DerivedWrites({ notes, indexing, memory, runtime, sessions, log: componentLogger(log, 'MemoryPersist') });
  // The session log forgets its lines only once the note lines derived from them are on disk.
  sessions.deriveFromLog({ flush: () => derived.flush(), durable: () => !notes.unsynced });
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
    notes,
    timezone: config.timezone,
    log: componentLogger(log, 'Reminders'),
    queue: (key, task) => dispatcher.submit(key, task),
    perChatPerHour: config.remindersPerChatPerHour,
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
  // Connected in the background: a slow or dead server never holds up the start. The MCP SDK is
  // loaded only when a server is configured: loading it took the daemon's start from ~150 to
  // ~182 MiB resident (docs/BENCHMARKS.md, "Resident memory").
  const mcp =
    config.mcp.servers.length > 0
      ? new (await import('../mcp/servers.js')).McpServers(config.mcp, {
          log: componentLogger(log, 'MCP'),
          toolTimeoutMs: config.toolTimeoutMs,
          ownTools: tools.names().length,
        })
      : undefined;
  if (mcp) {
    tools.addSource(mcp);
    mcp.start();
  }
  const models = await ChatModels.create(config);
  // A call that ends without usage is estimated with its model's tokenizer (LLM_MODEL's for one
  // not among the chat models, e.g. LLM_MODEL_BALANCED).
  llm.tokensFor = (model) => (models.get(model) ?? models.defaultModel).tokens;
  const { info: model, tokens } = models.defaultModel;
  const stats = new TurnStats();
  const consolidation = new ConsolidationService(
    llm,
    { timeoutMs: config.consolidationTimeoutMs, maxMemorySize: config.maxMemorySize, timezone: config.timezone },
    componentLogger(log, 'Consolidation'),
    async (facts, ctx) => {
      // Not skipped under the scrub of a /forget (MemoryIndex.whenWritable): it waits for it.
      await index.whenWritable();
      for (const f of index.saveFacts(facts.map((content) => ({ content, scope: ctx.scope, sessionId: ctx.sessionId })))) {
        if (!f.duplicateOf) embedder?.enqueue(f.id, f.content);
      }
    },
  );
  const compaction = new CompactionService(
    llm,
    consolidation,
    { summaryTimeoutMs: config.summaryTimeoutMs, summaryMaxTokens: 500, timezone: config.timezone },
    componentLogger(log, 'AutoCompact'),
  );
  const instructions = new InstructionsSource(config.workspaceDir);
  const modelOf = (session: Session) => chatModel({ models, runtime }, session);
  const fit = new ContextFit({
    compaction,
    memory,
    model: modelOf,
    toolDefinitions: () => tools.definitions(),
    lastSystemPromptTokens: (id) => stats.lastTurn(id)?.systemPromptTokens,
    systemPromptBound: (m) => m.tokens.countText(instructions.cachedText()) + memoryBudgetTokens(m.limit, runtime.get().memory),
  });
  const compactor = new AutoCompactor({ fit, runtime });
  const inbox = new FileInbox(path.join(config.workspaceDir, 'inbox.jsonl'));
  const media = new MediaFetchers();
  const forget = new ForgetService({
    workspaceDir: config.workspaceDir,
    memory,
    index,
    sessions,
    journal: inbox,
    reminders,
    log: componentLogger(log, 'Forget'),
  });
  const services: Services = {
    config,
    log,
    sessions,
    llm,
    tools,
    tokens,
    model,
    models,
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
    media,
    mcp,
    notes,
    derived,
  };
  return { services, dispatcher, inbox, instructions, embedder, fit, modelOf };
}
