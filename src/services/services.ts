/** The long-lived services one daemon owns, handed to systems, commands and tools. */
import type { Config } from '../config/env.js';
import type { Logger } from '../core/log.js';
import type { FileSessionStore } from '../sessions/file-store.js';
import type { LlmClient } from '../llm/client.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { TokenCounter } from '../llm/tokens.js';
import type { ModelInfo } from '../llm/catalogue.js';
import type { ActiveModel, ChatModels } from '../llm/chat-models.js';
import type { Session } from '../sessions/model.js';
import type { TurnStats } from '../turn/stats.js';
import type { FileMemoryService } from '../memory/file-memory.js';
import type { RuntimeConfigStore } from '../config/runtime.js';
import type { ConsolidationService } from '../memory/consolidation.js';
import type { AutoCompactor } from '../turn/auto-compact.js';
import type { MemoryIndex } from '../index/memory-index.js';
import type { IndexingService } from '../index/ingest.js';
import type { Scheduler } from '../scheduler/jobs.js';
import type { ForgetService } from '../privacy/forget.js';
import type { ReminderService } from '../reminders/service.js';
import type { UsageStore } from '../usage/usage.js';
import type { TokenBudget } from '../usage/budget.js';
import type { MediaFetchers } from '../media/attachments.js';
import type { McpServers } from '../mcp/servers.js';
import type { DailyNotes } from '../memory/daily-notes.js';
import type { DerivedWrites } from '../turn/derived.js';

export interface Services {
  config: Config;
  log: Logger;
  /** The file implementation while the memory page and forget read its files (#34 item 4: they go through SessionStore next). */
  sessions: FileSessionStore;
  llm: LlmClient;
  tools: ToolRegistry;
  /** LLM_MODEL's tokenizer and catalogue entry; a chat's own model is `chatModel(services, session)`. */
  tokens: TokenCounter;
  model: ModelInfo;
  /** The models chats may answer with (LLM_MODEL, LLM_MODELS) and the fallbacks: limit, tokenizer, images. */
  models: ChatModels;
  stats: TurnStats;
  /** The file implementation while the memory page, forget and export read its folders (#34 item 4: they go through MemoryService next). */
  memory: FileMemoryService;
  runtime: RuntimeConfigStore;
  consolidation: ConsolidationService;
  compactor: AutoCompactor;
  index: MemoryIndex;
  indexing: IndexingService;
  scheduler: Scheduler;
  /** /forget (and the web page later): find and remove words from one chat's memory. */
  forget: ForgetService;
  reminders: ReminderService;
  /** Tokens per chat per day (workspace/usage.db). */
  usage: UsageStore;
  /** DAILY_TOKEN_BUDGET per chat. */
  budget: TokenBudget;
  /** Channels' file downloaders (images are fetched per turn by file id). */
  media: MediaFetchers;
  /** The one writer of daily-note lines (exchanges via `derived`, reminders). */
  notes: DailyNotes;
  /** A turn's note line and index rows, derived from the session log (and rebuilt from it after a crash). */
  derived: DerivedWrites;
  /** MCP_CONFIG's servers, whose tools join the registry's (undefined: none configured). */
  mcp: McpServers | undefined;
}

/** The context limit budgets are measured against: min(the model's input limit, compaction.maxContextTokens). */
export function contextLimit(model: ModelInfo, runtime: RuntimeConfigStore): number {
  return Math.min(model.maxInputTokens, runtime.get().compaction.maxContextTokens);
}

/** The model a chat answers with (its /model choice while still offered, else LLM_MODEL), with its context limit. */
export function chatModel(s: Pick<Services, 'models' | 'runtime'>, session: Session): ActiveModel {
  const m = s.models.of(session.metadata.model);
  return { ...m, limit: contextLimit(m.info, s.runtime) };
}

/** Any configured model by name (a fallback too) with its context limit; undefined for a name the settings do not hold. */
export function modelNamed(s: Pick<Services, 'models' | 'runtime'>, name: string): ActiveModel | undefined {
  const m = s.models.get(name);
  return m && { ...m, limit: contextLimit(m.info, s.runtime) };
}
