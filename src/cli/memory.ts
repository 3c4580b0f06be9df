/**
 * `npm run memory -- <command>`: search, stats, reindex, run-job <name>, eval <dataset.json>, usage,
 * and the per-chat commands of memory-chat.ts (versions, restore, purge, reminders, import).
 * Uses the same services as the daemon (same index file, same search, same jobs).
 */
import { loadDotEnv } from '../config/dotenv.js';
import { loadConfig } from '../config/env.js';
import { CHANNELS } from '../app/channels.js';
import { createLogger } from '../core/log.js';
import { runEvalCommand } from './eval-command.js';
import { answerHelp } from './help.js';

const USAGE = `usage: npm run memory -- <command>
  search "<query>" [--chat CHANNEL:ID] [--json]   hybrid search in one chat's memory (default console:local)
  stats [--chat CHANNEL:ID]                         counts by kind, entities, vector search state
  reindex [--embeddings]                            rebuild full-text indexes and entity links (and vectors)
  run-job <enrichment|consolidation|decay|reflection>   run a nightly job now
  eval <dataset.json>... [--k 5,10,20] [--mode hybrid|bm25 | --compare] [--split all|tune|report] [--json]
                                                    retrieval recall@k and latency (--compare: baseline beside default)
  versions --chat CHANNEL:ID                        versions of the chat's MEMORY.md (time, what changed it, +/- entries)
  restore --chat CHANNEL:ID --version N             make version N the current MEMORY.md (kept as a new version)
  purge --chat CHANNEL:ID [--pairing]               delete every trace of one chat (stop the daemon first)
  import --from openclaw|hermes|nanobot|membot PATH --chat CHANNEL:ID
                                                    another assistant's memory (or a /export file) into a chat (daemon stopped)
  reminders --chat CHANNEL:ID [cancel N|all]        the chat's pending reminders; cancel one or all (daemon running or not)
  migrate --to postgres|files [--force]             copy the workspace into DATABASE_URL's database, or back (stop the daemon first)
  usage [--days 7] [--chat CHANNEL:ID]              tokens per day, one table per chat`;

async function main(): Promise<number> {
  answerHelp(process.argv.slice(2), USAGE);
  loadDotEnv();
  const [cmd, ...args] = process.argv.slice(2);
  if (cmd === 'eval') return runEvalCommand(args, USAGE);
  const { config, problems } = loadConfig({ OPENAI_API_KEY: 'unused-by-this-command', ...process.env }, process.cwd(), CHANNELS);
  if (problems.length > 0) {
    for (const p of problems) process.stderr.write(`config: ${p}\n`);
    return 2;
  }
  if (cmd === 'usage') return (await import('../features/usage/report.js')).runUsageCommand(args, config);
  const log = createLogger({ level: process.env.LOG_LEVEL ?? 'warn' });
  if (cmd === 'migrate') {
    const io = { out: (l: string) => process.stdout.write(`${l}\n`), err: (l: string) => process.stderr.write(`${l}\n`) };
    return (await import('./migrate.js')).runMigrate(args, config, log, io);
  }
  const { runMemoryCommand } = await import('./memory-commands.js');
  return runMemoryCommand(cmd, args, config, log, USAGE);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`memory: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
