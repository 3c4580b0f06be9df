/**
 * What the app builds for one daemon (app/build.ts): the stores and the services the features are
 * made from. Only the app holds them together: a feature is given the few it needs when it is
 * built (app/features.ts), and a command, a tool, the intake or the memory page never sees this.
 * main.ts and the tests read the parts of a built app through `App.parts`.
 */
import type { WhyStore } from '../features/why/store.js';
import type { ForgetPath } from '../features/why/command.js';
import type { SessionStore } from '../sessions/store.js';
import type { LlmClient } from '../llm/client.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ActiveModel, ChatModels } from '../llm/chat-models.js';
import type { Session } from '../sessions/model.js';
import type { TurnStats } from '../turn/stats.js';
import type { MemoryService } from '../memory/service.js';
import type { RuntimeConfigStore } from '../config/runtime.js';
import type { ConsolidationService } from '../memory/consolidation.js';
import type { AutoCompactor } from '../turn/auto-compact.js';
import type { ContextFit } from '../turn/context-fit.js';
import type { MemoryIndex } from '../index/memory-index.js';
import type { IndexingService } from '../index/ingest.js';
import type { Embedder } from '../index/upkeep/embeddings.js';
import type { Scheduler } from './jobs.js';
import type { ForgetService } from '../features/privacy/forget.js';
import type { PendingApprovals } from '../features/memory-access/pending.js';
import type { ReminderService } from '../features/reminders/service.js';
import type { UsageStore } from '../features/usage/usage.js';
import type { TokenBudget } from '../features/usage/budget.js';
import type { MediaFetchers } from '../media/attachments.js';
import type { McpServers } from '../mcp/servers.js';
import type { DailyNotes } from '../memory/daily-notes.js';
import type { DerivedWrites } from '../features/record/derived.js';
import type { Dispatcher } from '../queue/dispatcher.js';
import type { Inbox } from '../queue/inbox.js';
import type { InstructionsSource } from '../features/prompt/instructions.js';
import type { Database } from '../storage/pg/database.js';
import type { ChannelProvider } from '../channels/provider.js';
import type { ChannelSection } from '../config/env.js';
import type { Chat } from '../core/chat.js';
import type { KeptValue } from '../storage/kept.js';
import type { ChatStops } from '../dispatch/stop.js';
import type { ClusterMember } from '../cluster/cluster.js';

export interface Parts {
  sessions: SessionStore;
  /** The per-chat queues every message, reminder and command runs in. */
  dispatcher: Dispatcher;
  /** The message journal (inbox.jsonl). */
  inbox: Inbox;
  llm: LlmClient;
  /** The registry the features' tools (and MCP servers' tools) are installed in. */
  tools: ToolRegistry;
  /** The models chats may answer with (LLM_MODEL, LLM_MODELS) and the fallbacks: limit, tokenizer, images. */
  models: ChatModels;
  /** The model a chat answers with (its /model choice while still offered, else LLM_MODEL), with its context limit. */
  modelOf: (session: Session) => ActiveModel;
  /** Any configured model by name (a fallback too) with its context limit; undefined for a name the settings do not hold. */
  modelNamed: (name: string) => ActiveModel | undefined;
  stats: TurnStats;
  memory: MemoryService;
  runtime: RuntimeConfigStore;
  consolidation: ConsolidationService;
  fit: ContextFit;
  compactor: AutoCompactor;
  instructions: InstructionsSource;
  index: MemoryIndex;
  /** Set when EMBEDDINGS_MODEL is and the index opened. */
  embedder: Embedder | undefined;
  indexing: IndexingService;
  scheduler: Scheduler;
  /** /forget and the memory page: find and remove words from one chat's memory. */
  forget: ForgetService;
  /** Memory writes held for the owner's approval: `/memory pending` and the memory page. */
  pending: PendingApprovals;
  /** /forget's path for /why's buttons (build.ts). */
  forgetWords: ForgetPath;
  /** What each of a chat's last answers was built from (/why: features/why). */
  why: WhyStore;
  reminders: ReminderService;
  /** Tokens per chat per day (workspace/usage.db). */
  usage: UsageStore;
  /** DAILY_TOKEN_BUDGET per chat. */
  budget: TokenBudget;
  /** Channels' file downloaders (images and voice notes are fetched per turn by file id). */
  media: MediaFetchers;
  /** The one writer of daily-note lines (exchanges via `derived`, reminders). */
  notes: DailyNotes;
  /** A turn's note line and index rows, derived from the session log (and rebuilt from it after a crash). */
  derived: DerivedWrites;
  /** MCP_CONFIG's servers, whose tools join the registry's (undefined: none configured). */
  mcp: McpServers | undefined;
  /** With DATABASE_URL: the database the state is kept in (stores.ts), for its health. */
  database: Database | undefined;
  /** Where the memory page's token is kept (stores.ts). */
  pageToken: KeptValue;
  /** The served channel's own stores, where the app keeps its state (stores.ts); in a cluster owned by this process. */
  channelState<St>(provider: ChannelProvider<ChannelSection, St>): St | undefined;
  /** What each chat has under way, for /stop (dispatch/stop.ts). */
  chatStops: ChatStops;
  /** Several processes on one database (app/cluster.ts): this process's membership; undefined otherwise. */
  cluster: ClusterMember | undefined;
  /** In a cluster, how work outside the journal (a reminder's delivery) runs as a chat's holder; set by createApp once the claims run. */
  asHolder: AsHolder;
}

/** Runs `task` as the chat's holder (app/cluster.ts); unset: one process, the task runs as it is. */
export interface AsHolder {
  run?: (chat: Chat, task: () => Promise<void>) => Promise<void>;
}
