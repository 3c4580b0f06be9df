/**
 * The daemon's features, in the order their commands are listed (/help, Telegram's menu) and
 * their tools sent; install.ts puts their systems in the pipeline by the ORDER table. Each is
 * given the parts it uses, named one by one. A new feature is its folder under src/features/ and
 * one line here.
 */
import type { Config } from '../config/env.js';
import type { Feature } from '../turn/feature.js';
import type { Command } from '../turn/command.js';
import type { Parts } from './parts.js';
import { createImagesSystem } from '../systems/images.js';
import { createTranscriptionSystem } from '../systems/transcription.js';
import { createAutoCompactionSystem } from '../systems/auto-compaction.js';
import { createContextBuildingSystem } from '../systems/context-building.js';
import { createToolLoopSystem } from '../systems/tool-loop.js';
import { createResponseDeliverySystem } from '../systems/response-delivery.js';
import { createMemoryPersistSystem } from '../systems/memory-persist.js';
import { createIndexingSystem } from '../systems/indexing.js';
import { createMemorySection } from '../context/memory-section.js';
import { createRelevantMemorySection } from '../context/relevant-memory.js';
import { createNewCommand } from '../dispatch/new.js';
import { createCompactCommand } from '../commands/compact.js';
import { createStatusCommand } from '../commands/status.js';
import { createMemoryCommand } from '../commands/memory.js';
import { createForgetCommand } from '../commands/forget.js';
import { createExportCommand } from '../commands/export.js';
import { createRemindersCommand } from '../commands/reminders.js';
import { createModelCommand } from '../commands/model.js';
import { createStopCommand } from '../commands/stop.js';
import { createDateTimeTool } from '../tools/datetime.js';
import { createMemoryFileTools } from '../tools/memory-files.js';
import { createMemoryIndexTools } from '../tools/memory-index.js';
import { createReminderTools } from '../tools/reminders.js';

export function features(p: Parts, config: Config): Feature[] {
  return [
    {
      name: 'answer',
      systems: [
        createToolLoopSystem({ llm: p.llm, tools: p.tools, maxIterations: config.maxToolIterations, guard: p.fit, fallbackModel: p.modelNamed }),
        createResponseDeliverySystem(),
      ],
      tools: [createDateTimeTool(config.timezone)],
    },
    {
      name: 'voice',
      systems: [
        createTranscriptionSystem({
          fetchers: p.media,
          llm: p.llm,
          model: config.telegram.transcriptionModel,
          timeoutMs: config.transcriptionTimeoutMs,
          showTranscript: config.telegram.showTranscript,
          maxMessageChars: config.maxMessageChars,
        }),
      ],
    },
    { name: 'images', systems: [createImagesSystem({ fetchers: p.media })] },
    {
      name: 'compaction',
      systems: [createAutoCompactionSystem({ compactor: p.compactor, runtime: p.runtime })],
      commands: [createCompactCommand({ budget: p.budget, compactor: p.compactor })],
    },
    {
      name: 'prompt',
      systems: [
        createContextBuildingSystem({
          instructions: p.instructions,
          sections: [createMemorySection({ memory: p.memory, runtime: p.runtime, timezone: config.timezone })],
          turnSections: [createRelevantMemorySection({ index: p.index, memory: p.memory, runtime: p.runtime, embedder: p.embedder })],
        }),
      ],
    },
    {
      name: 'record',
      systems: [createMemoryPersistSystem({ derived: p.derived, runtime: p.runtime }), createIndexingSystem({ derived: p.derived, indexing: p.indexing })],
    },
    {
      name: 'status',
      commands: [
        createStatusCommand({
          modelOf: p.modelOf,
          llm: p.llm,
          stats: p.stats,
          runtime: p.runtime,
          compactor: p.compactor,
          memory: p.memory,
          index: p.index,
          tools: p.tools,
          reminders: (channel, chatId) => p.reminders.list(channel, chatId).map((r) => p.reminders.describe(r)),
          usage: p.usage,
          budget: p.budget,
          mcpLines: () => p.mcp?.statusLines() ?? [],
          workspaceDir: config.workspaceDir,
        }),
      ],
    },
    {
      name: 'memory-access',
      commands: [createMemoryCommand({ memory: p.memory, index: p.index })],
      tools: [...createMemoryFileTools(p.memory), ...createMemoryIndexTools(p.index, p.memory, p.embedder)],
    },
    {
      name: 'privacy',
      commands: [
        createForgetCommand({ forget: p.forget }),
        createExportCommand({ memory: p.memory, index: p.index, sessions: p.sessions, workspaceDir: config.workspaceDir }),
      ],
    },
    { name: 'reminders', commands: [createRemindersCommand(p.reminders)], tools: createReminderTools(p.reminders) },
    { name: 'models', commands: [createModelCommand({ models: p.models, runtime: p.runtime, compactor: p.compactor })] },
    { name: 'stop', commands: [createStopCommand()] },
  ];
}

/** The commands that are no feature's own, listed first: /new (and /help, which the router lists itself: install.ts). */
export function ownCommands(p: Parts, config: Config): Command[] {
  return [createNewCommand({ consolidation: p.consolidation, memory: p.memory, index: p.index, consolidationTimeoutMs: config.consolidationTimeoutMs })];
}
