/** The index commands of `npm run memory` (everything but eval, which needs no config). */
import type { Config } from '../config/env.js';
import { componentLogger, type Logger } from '../core/log.js';
import { SqliteMemoryIndex } from '../index/sqlite-memory-index.js';
import { LlmClient } from '../llm/client.js';
import { Upkeep, JOB_NAMES, type JobName } from '../index/upkeep/upkeep.js';
import { Embedder } from '../index/upkeep/embeddings.js';
import { extractEntities } from '../index/store/entities.js';
import { CHAT_COMMANDS, runChatCommand } from './memory-chat.js';
import { AppError } from '../core/errors.js';
import { chatKey } from '../core/chat.js';

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

export async function runMemoryCommand(cmd: string | undefined, args: string[], config: Config, log: Logger, usage: string): Promise<number> {
  // Bad arguments: usage and exit 2, before anything opens (or creates) memory.db.
  const usageError = (why: string) => {
    process.stderr.write(`${why}\n${usage}\n`);
    return 2;
  };
  if (CHAT_COMMANDS.includes(cmd ?? '')) {
    return runChatCommand(cmd!, args, config, log, { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) });
  }
  if (!['search', 'stats', 'reindex', 'run-job', 'entities'].includes(cmd ?? '')) return usageError(cmd ? `unknown command "${cmd}"` : 'no command given');
  if (cmd === 'search' && !args.some((a, i) => !a.startsWith('--') && args[i - 1] !== '--chat' && args[i - 1] !== '--limit')) {
    return usageError('search needs a query: npm run memory -- search "cat name"');
  }
  if (cmd === 'run-job' && !JOB_NAMES.includes(args[0] as JobName)) return usageError(`run-job takes one of: ${JOB_NAMES.join(', ')}`);
  const index = SqliteMemoryIndex.inWorkspace(config.workspaceDir, log);
  if (!index.enabled) {
    process.stderr.write(`memory.db could not be opened: ${index.disabledReason}\n`);
    return 1;
  }
  const chat = flag(args, '--chat') ?? chatKey({ channel: 'console', chatId: config.consoleChatId });
  const scope = config.memoryScope === 'global' ? 'global' : chat;
  try {
    switch (cmd) {
      case 'search': {
        const query = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--chat' && args[i - 1] !== '--limit')!;
        const results = index.search(query, { scope, limit: Number(flag(args, '--limit') ?? 10) });
        if (args.includes('--json')) process.stdout.write(`${JSON.stringify(results)}\n`);
        else if (results.length === 0) process.stdout.write(`Nothing found in ${scope}.\n`);
        else for (const r of results) process.stdout.write(`${r.date.slice(0, 16)} ${r.kind} ${r.speaker ?? ''} (${r.score.toFixed(4)}): ${r.content}\n`);
        return 0;
      }
      case 'stats': {
        process.stdout.write(`${JSON.stringify({ scope, ...index.stats(scope) }, null, 2)}\n`);
        return 0;
      }
      case 'reindex': {
        const { memories: rows, links } = index.rebuildDerived();
        let vectors = 'vectors unchanged';
        if (args.includes('--embeddings')) {
          if (!config.embeddingsModel) throw new AppError('config.invalid', { problem: '--embeddings needs EMBEDDINGS_MODEL to be set' });
          const embedder = new Embedder(new LlmClient(config, log), index, config.embeddingsModel, config.embeddingsDimensions, log);
          embedder.reset();
          for (const r of rows) embedder.enqueue(r.id, r.content);
          await embedder.flush();
          vectors = `${rows.length} memories re-embedded at ${config.embeddingsDimensions} dimensions`;
        }
        process.stdout.write(`Reindexed ${rows.length} memories: full-text rebuilt, ${links} entity links, ${vectors}.\n`);
        return 0;
      }
      case 'run-job': {
        const job = args[0] as JobName;
        const upkeep = new Upkeep(index, new LlmClient(config, log), componentLogger(log, 'Upkeep'), {
          accurateNer: false,
          timeoutMs: config.consolidationTimeoutMs,
        });
        const r = await upkeep.run(job);
        process.stdout.write(`${job}: ${r.skipped ? `skipped — ${r.skipped}` : r.detail}\n`);
        return r.detail.startsWith('failed') ? 1 : 0;
      }
      case 'entities': {
        process.stdout.write(`${JSON.stringify(extractEntities(args.join(' ')))}\n`);
        return 0;
      }
      default:
        process.stderr.write(`${usage}\n`);
        return 2;
    }
  } finally {
    index.close();
  }
}
