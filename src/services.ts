/** The long-lived services one daemon owns, handed to systems, commands and tools. */
import type { Config } from './config/env.js';
import type { Logger } from './log.js';
import type { SessionStore } from './sessions/store.js';
import type { LlmClient } from './llm/client.js';
import type { ToolRegistry } from './tools/registry.js';
import type { TokenCounter } from './llm/tokens.js';
import type { ModelInfo } from './llm/catalogue.js';
import type { TurnStats } from './stats.js';

export interface Services {
  config: Config;
  log: Logger;
  sessions: SessionStore;
  llm: LlmClient;
  tools: ToolRegistry;
  tokens: TokenCounter;
  model: ModelInfo;
  stats: TurnStats;
}
