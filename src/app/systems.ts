/**
 * Builds the pipeline's systems (order numbers in turn/order.ts) and the slash commands
 * from the services. To add a system or a command, add it here.
 */
import type { Logger } from '../core/log.js';
import { Pipeline } from '../turn/runner.js';
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
import { CommandRouter } from '../commands/router.js';
import { createHelpCommand } from '../commands/help.js';
import { createNewCommand } from '../commands/new.js';
import { createCompactCommand } from '../commands/compact.js';
import { createStatusCommand } from '../commands/status.js';
import { createMemoryCommand } from '../commands/memory.js';
import { createForgetCommand } from '../commands/forget.js';
import { createExportCommand } from '../commands/export.js';
import { createRemindersCommand } from '../commands/reminders.js';
import { createModelCommand } from '../commands/model.js';
import { createStopCommand } from '../commands/stop.js';
import type { Command } from '../commands/types.js';
import type { Built } from '../services/build.js';
import { modelNamed } from '../services/services.js';

export function buildPipeline(built: Built, log: Logger): Pipeline {
  const { services, instructions, embedder, fit } = built;
  const { config, memory, runtime, index, llm, tools, compactor, indexing } = services;
  return new Pipeline(
    [
      createTranscriptionSystem({
        fetchers: services.media,
        llm,
        model: config.telegram.transcriptionModel,
        timeoutMs: config.transcriptionTimeoutMs,
        showTranscript: config.telegram.showTranscript,
        maxMessageChars: config.maxMessageChars,
      }),
      createImagesSystem({ fetchers: services.media }),
      createAutoCompactionSystem({ compactor, runtime }),
      createContextBuildingSystem({
        instructions,
        sections: [createMemorySection({ memory, runtime, timezone: config.timezone })],
        turnSections: [createRelevantMemorySection({ index, memory, runtime, embedder })],
      }),
      createToolLoopSystem({ llm, tools, maxIterations: config.maxToolIterations, guard: fit, fallbackModel: (name) => modelNamed(services, name) }),
      createResponseDeliverySystem(),
      createMemoryPersistSystem({ derived: services.derived, runtime }),
      createIndexingSystem({ derived: services.derived, indexing }),
    ],
    log,
  );
}

/** `adminsManage`: GROUP_ADMINS_MANAGE (the channel decides who is an admin; the router words its refusals). */
export function buildCommands(adminsManage = false): CommandRouter {
  const commands: Command[] = [
    createNewCommand(),
    createCompactCommand(),
    createStatusCommand(),
    createMemoryCommand(),
    createForgetCommand(),
    createExportCommand(),
    createRemindersCommand(),
    createModelCommand(),
    createStopCommand(),
  ];
  const router: CommandRouter = new CommandRouter([createHelpCommand(() => router.list()), ...commands], adminsManage);
  return router;
}
