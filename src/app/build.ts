/**
 * Builds the parts of one daemon (stores: stores.ts; LLM client, memory, index, reminders, compaction) in
 * dependency order, adding each that holds something to the lifecycle as it is built, so the
 * stop takes them down in the reverse order (lifecycle.ts). Nothing here handles a message: see
 * dispatch/intake.ts; nothing here is a feature: see features.ts.
 */
import type { Config } from '../config/env.js';
import { componentLogger, type Logger } from '../core/log.js';
import { LlmClient } from '../llm/client.js';
import { ChatModels } from '../llm/chat-models.js';
import type { Session } from '../sessions/model.js';
import { TokenBudget } from '../features/usage/budget.js';
import { ToolRegistry } from '../tools/registry.js';
import { memoryBudgetTokens } from '../config/runtime.js';
import { openStores, type StoresOptions } from './stores.js';
import { InstructionsSource } from '../features/prompt/instructions.js';
import { Dispatcher } from '../queue/dispatcher.js';
import { TurnStats } from '../turn/stats.js';
import type { AsHolder, Parts } from './parts.js';
import type { Lifecycle } from './lifecycle.js';
import { describeCounts, ForgetService, MIN_FORGET_CHARS } from '../features/privacy/forget.js';
import type { ForgetPath } from '../features/why/command.js';
import { ConsolidationService } from '../memory/consolidation.js';
import { CompactionService } from '../memory/compaction.js';
import { ContextFit } from '../turn/context-fit.js';
import { AutoCompactor } from '../turn/auto-compact.js';
import { Embedder } from '../index/upkeep/embeddings.js';
import { withoutCorrected } from '../index/search/superseded.js';
import { IndexingService } from '../index/ingest.js';
import { Upkeep } from '../index/upkeep/upkeep.js';
import { Scheduler } from './jobs.js';
import { MediaFetchers } from '../media/attachments.js';
import { ReminderService } from '../features/reminders/service.js';
import { DailyNotes } from '../memory/daily-notes.js';
import { DerivedWrites } from '../features/record/derived.js';
import { chatModel, modelNamed } from '../features/models/chat-model.js';
import { PendingApprovals } from '../features/memory-access/pending.js';
import { ChatStops } from '../dispatch/stop.js';
import type { ClusterMember } from '../cluster/cluster.js';

export interface BuildOptions {
  /** Start the nightly upkeep jobs (the daemon does; tests and CLIs do not). */
  scheduler?: boolean;
  /** The clock reminders use (tests move it forward a day). */
  now?: () => number;
  /** Before any chat's store opens (stores.ts): the daemon finishes a purge a kill cut short. */
  beforeChats?: StoresOptions['beforeChats'];
  /**
   * With DATABASE_URL, the daemon (main.ts) serves one bot with the other processes on its
   * database (app/cluster.ts): `channel` is the one it serves — it runs only that channel's chats.
   */
  cluster?: { channel: string };
}

export async function buildParts(config: Config, log: Logger, opts: BuildOptions, life: Lifecycle): Promise<Parts> {
  const dispatcher = new Dispatcher(config.maxConcurrentTurns);
  // Added first, so stopped last: it stops taking work once everything else has, then waits for the running turns.
  life.add({
    name: 'dispatcher',
    stop: () => {
      dispatcher.close();
      return dispatcher.drain(config.shutdownTimeoutMs);
    },
  });
  // What each chat has under way, for /stop: the intake's, and the cluster's for a chat another process took.
  const chatStops = new ChatStops(config.groupAdminsManage);
  // Loaded only in a cluster: the embedded default runs none of it. The process's id is decided
  // first and registered before its chats' stores open: its session log lines carry it, and a
  // process starting beside it leaves the lines of a live one (sessions/pg/log.ts).
  const joining = opts.cluster ? { code: await import('./cluster.js'), channel: opts.cluster.channel } : undefined;
  const processId = joining?.code.newProcessId();
  let cluster: ClusterMember | undefined;
  // Files and SQLite, or PostgreSQL with DATABASE_URL (stores.ts). A chat's session stays in
  // memory while it has work queued or running (turns hold it).
  const stores = await openStores(config, log, life, {
    inUse: (id) => dispatcher.busy(id),
    ...(processId ? { processId } : {}),
    beforeChats: async (purging, db) => {
      if (joining && processId && db) cluster = await joining.code.joinAsMember(db, config, log, life, { id: processId, channel: joining.channel }, chatStops);
      await opts.beforeChats?.(purging, db);
    },
  });
  const { runtime, sessions, usage, memory, index, inbox } = stores;
  const budget = new TokenBudget(usage, config.dailyTokenBudget, config.budgetExemptUsers, config.timezone);
  const models = await ChatModels.create(config);
  const llm = new LlmClient(config, componentLogger(log, 'LLM'), {
    usageSink: (account, u, model) => usage.record(account, u, new Date(), model),
    gate: (account) => budget.pausesBackground(account),
    // A call that ends without usage is estimated with its model's tokenizer (LLM_MODEL's for one
    // not among the chat models, e.g. LLM_MODEL_BALANCED).
    tokensFor: (model) => (models.get(model) ?? models.defaultModel).tokens,
  });
  const indexLog = componentLogger(log, 'Index');
  let embedder: Embedder | undefined;
  if (config.embeddingsModel && index.enabled) {
    embedder = new Embedder(llm, index, config.embeddingsModel, config.embeddingsDimensions, indexLog);
    embedder.init();
    const queued = embedder;
    life.add({ name: 'embedder', close: () => queued.flush() });
  }
  const indexing = new IndexingService(index, embedder);
  const notes = new DailyNotes(memory, config.timezone, componentLogger(log, 'MemoryPersist'));
  const derived = new DerivedWrites({ notes, indexing, memory, runtime, sessions, log: componentLogger(log, 'MemoryPersist') });
  // The session log forgets its lines only once the note lines derived from them are on disk.
  sessions.deriveFromLog({ flush: () => derived.flush(), durable: () => !notes.unsynced });
  const upkeep = new Upkeep(index, llm, componentLogger(log, 'Upkeep'), {
    accurateNer: false,
    timeoutMs: config.consolidationTimeoutMs,
    paused: (scope) => budget.pausesBackground({ chat: scope, kind: 'facts' }),
  });
  const scheduler = new Scheduler(upkeep, config.timezone, componentLogger(log, 'Upkeep'), cluster?.jobGate);
  if (opts.scheduler) scheduler.start();
  life.add({ name: 'nightly jobs', stop: () => scheduler.stop() });
  const asHolder: AsHolder = {};
  // In a cluster a delivery claimed here is recorded as this process's: no other takes it up while it lives.
  if (cluster) stores.reminders.ownedBy?.(cluster.id, config.database.leaseMs);
  const reminders = new ReminderService({
    store: stores.reminders,
    takesOver: cluster !== undefined && stores.reminders.ownedBy !== undefined,
    lookEveryMs: config.database.leaseMs,
    sessions,
    notes,
    timezone: config.timezone,
    log: componentLogger(log, 'Reminders'),
    // In a cluster as the chat's holder (`asHolder`, set once the claims run: app/cluster.ts).
    queue: (key, task, chat) => (asHolder.run ? asHolder.run(chat, () => dispatcher.submit(key, task)) : dispatcher.submit(key, task)),
    perChatPerHour: config.remindersPerChatPerHour,
    ...(opts.now ? { now: opts.now } : {}),
  });
  life.add({ name: 'reminders', stop: () => reminders.stop(), close: () => reminders.close() });
  // Before any channel starts: a reminder recorded just before a kill is not sent again.
  await reminders.settleClaims();
  // The features' tools are installed in it (install.ts).
  const tools = new ToolRegistry([], config.toolTimeoutMs);
  // Connected in the background: a slow or dead server never holds up the start. The MCP SDK is
  // loaded only when a server is configured: loading it took the daemon's start from ~150 to
  // ~182 MiB resident (docs/BENCHMARKS.md, "Resident memory").
  const mcp =
    config.mcp.servers.length > 0
      ? new (await import('../mcp/servers.js')).McpServers(config.mcp, {
          log: componentLogger(log, 'MCP'),
          toolTimeoutMs: config.toolTimeoutMs,
          ownTools: () => tools.size,
        })
      : undefined;
  if (mcp) {
    tools.addSource(mcp);
    mcp.start();
    life.add({ name: 'mcp', close: () => mcp.stop() });
  }
  const stats = new TurnStats();
  const consolidation = new ConsolidationService(
    llm,
    { timeoutMs: config.consolidationTimeoutMs, maxMemorySize: config.maxMemorySize, timezone: config.timezone },
    componentLogger(log, 'Consolidation'),
    async (facts, ctx) => {
      // Not skipped under the scrub of a /forget (MemoryIndex.whenWritable): it waits for it.
      await index.whenWritable();
      // Not a value a correction replaced: the conversation read may predate the correction.
      const { kept } = withoutCorrected(facts, index.corrections(ctx.scope));
      for (const f of index.saveFacts(kept.map((content) => ({ content, scope: ctx.scope, sessionId: ctx.sessionId })))) {
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
  const media = new MediaFetchers();
  const forget = new ForgetService({
    workspaceDir: config.workspaceDir,
    memory,
    pending: stores.pending,
    index,
    sessions,
    journal: inbox,
    reminders,
    records: stores.forgetting,
    why: stores.why,
    log: componentLogger(log, 'Forget'),
  });
  return {
    sessions,
    dispatcher,
    inbox,
    llm,
    tools,
    models,
    modelOf,
    modelNamed: (name) => modelNamed({ models, runtime }, name),
    stats,
    memory,
    runtime,
    consolidation,
    fit,
    compactor,
    instructions,
    index,
    embedder,
    indexing,
    scheduler,
    forget,
    // Approving a held memory write runs it through the registry, as the tool call would have run.
    pending: new PendingApprovals(stores.pending, memory, tools),
    forgetWords: forgetPath(forget),
    why: stores.why,
    reminders,
    usage,
    budget,
    media,
    notes,
    derived,
    mcp,
    database: stores.database,
    pageToken: stores.pageToken,
    // In a cluster a channel's rows are this process's (Telegram's placeholders: no other takes them while it lives).
    channelState: (provider) => stores.channelState(provider, cluster ? { id: cluster.id, leaseMs: config.database.leaseMs } : undefined),
    chatStops,
    cluster,
    asHolder,
  };
}

/** /forget's path as /why's buttons use it (a feature does not import another): the same apply, the chat told if a kill cuts it short. */
function forgetPath(forget: ForgetService): ForgetPath {
  return {
    minChars: MIN_FORGET_CHARS,
    async apply(chat, words) {
      const r = await forget.apply(chat, words, { notify: true });
      return { words: r.words, removed: describeCounts(r.counts), indexOff: r.indexOff };
    },
  };
}
