/**
 * The daemon's features, in the order their commands are listed (/help, Telegram's menu) and
 * their tools sent; install.ts puts their systems in the pipeline by the ORDER table. Each is
 * given the parts it uses, named one by one. A new feature is its folder under src/features/ and
 * one line here (test/imports.test.ts checks that each folder is installed here once).
 */
import type { Config } from '../config/env.js';
import type { Feature } from '../turn/feature.js';
import type { Command } from '../turn/command.js';
import type { Parts } from './parts.js';
import { createNewCommand } from '../dispatch/new.js';
import { answerFeature } from '../features/answer/index.js';
import { voiceFeature } from '../features/voice/index.js';
import { imagesFeature } from '../features/images/index.js';
import { compactionFeature } from '../features/compaction/index.js';
import { promptFeature } from '../features/prompt/index.js';
import { recordFeature } from '../features/record/index.js';
import { statusFeature } from '../features/status/index.js';
import { memoryAccessFeature } from '../features/memory-access/index.js';
import { privacyFeature } from '../features/privacy/index.js';
import { remindersFeature } from '../features/reminders/index.js';
import { modelsFeature } from '../features/models/index.js';
import { usageFeature } from '../features/usage/index.js';
import { stopFeature } from '../features/stop/index.js';
import { whyFeature } from '../features/why/index.js';

export function features(p: Parts, config: Config): Feature[] {
  return [
    answerFeature({
      llm: p.llm,
      tools: p.tools,
      maxIterations: config.maxToolIterations,
      guard: p.fit,
      fallbackModel: p.modelNamed,
      timezone: config.timezone,
    }),
    voiceFeature({
      fetchers: p.media,
      llm: p.llm,
      model: config.transcriptionModel,
      timeoutMs: config.transcriptionTimeoutMs,
      showTranscript: config.showTranscript,
      maxMessageChars: config.maxMessageChars,
    }),
    imagesFeature({ fetchers: p.media }),
    compactionFeature({ compactor: p.compactor, runtime: p.runtime, budget: p.budget }),
    promptFeature({ instructions: p.instructions, memory: p.memory, runtime: p.runtime, timezone: config.timezone, index: p.index, embedder: p.embedder }),
    recordFeature({ derived: p.derived, runtime: p.runtime, indexing: p.indexing }),
    statusFeature({
      modelOf: p.modelOf,
      llm: p.llm,
      stats: p.stats,
      runtime: p.runtime,
      compactor: p.compactor,
      memory: p.memory,
      index: p.index,
      tools: p.tools,
      reminders: async (channel, chatId) => (await p.reminders.list(channel, chatId)).map((r) => p.reminders.describe(r)),
      usage: p.usage,
      budget: p.budget,
      mcpLines: () => p.mcp?.statusLines() ?? [],
      workspaceDir: config.workspaceDir,
      database: p.database,
      clusterLines: p.cluster?.statusLines,
    }),
    memoryAccessFeature({ memory: p.memory, index: p.index, runtime: p.runtime, embedder: p.embedder, pending: p.pending }),
    privacyFeature({ forget: p.forget, memory: p.memory, index: p.index, sessions: p.sessions, workspaceDir: config.workspaceDir }),
    whyFeature({ store: p.why, forget: p.forgetWords, index: p.index, memory: p.memory, embedder: p.embedder }),
    remindersFeature({ reminders: p.reminders }),
    modelsFeature({ models: p.models, runtime: p.runtime, compactor: p.compactor }),
    usageFeature(),
    stopFeature(),
  ];
}

/** The commands that are no feature's own, listed first: /new (and /help, which the router lists itself: install.ts). */
export function ownCommands(p: Parts, config: Config): Command[] {
  return [createNewCommand({ consolidation: p.consolidation, memory: p.memory, index: p.index, consolidationTimeoutMs: config.consolidationTimeoutMs })];
}
