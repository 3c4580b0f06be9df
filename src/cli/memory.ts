/**
 * `npm run memory -- <command>`: search, stats, reindex, run-job <name>, eval <dataset.json>, usage.
 * Uses the same services as the daemon (same index file, same search, same jobs).
 */
import dotenv from 'dotenv';
import path from 'node:path';
import { loadConfig } from '../config/env.js';
import { createLogger } from '../log.js';
import { loadDataset, runEval, type EvalMode } from '../index/eval.js';

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

const USAGE = `usage: npm run memory -- <command>
  search "<query>" [--chat CHANNEL:ID] [--json]   hybrid search in one chat's memory (default console:local)
  stats [--chat CHANNEL:ID]                         counts by kind, entities, vector search state
  reindex [--embeddings]                            rebuild full-text indexes and entity links (and vectors)
  run-job <enrichment|consolidation|decay|reflection>   run a nightly job now
  eval <dataset.json> [--k 5,10,20] [--json] [--mode hybrid|bm25]   retrieval recall@k and latency
  versions --chat CHANNEL:ID                        versions of the chat's MEMORY.md (time, what changed it, +/- entries)
  restore --chat CHANNEL:ID --version N             make version N the current MEMORY.md (kept as a new version)
  purge --chat CHANNEL:ID [--pairing]               delete every trace of one chat (stop the daemon first)
  usage [--days 7] [--chat CHANNEL:ID]              tokens per day, one table per chat`;

async function main(): Promise<number> {
  dotenv.config({ quiet: true });
  const [cmd, ...args] = process.argv.slice(2);
  if (cmd === 'eval') {
    const file = args.find((a) => !a.startsWith('--') && a !== flag(args, '--k') && a !== flag(args, '--mode'));
    if (!file) {
      process.stderr.write(`${USAGE}\n`);
      return 2;
    }
    const ks = (flag(args, '--k') ?? '5,10,20').split(',').map(Number).filter((k) => Number.isInteger(k) && k > 0);
    const mode = (flag(args, '--mode') ?? 'hybrid') as EvalMode;
    if (ks.length === 0 || (mode !== 'hybrid' && mode !== 'bm25')) {
      process.stderr.write('eval: --k takes whole numbers like 5,10,20 and --mode hybrid or bm25\n');
      return 2;
    }
    const report = runEval(await loadDataset(path.resolve(file)), ks, mode);
    if (args.includes('--json')) {
      const out: Record<string, number> = { questions: report.questions };
      for (const k of ks) out[`recall@${k}`] = Number(report.recall[k]!.toFixed(4));
      out.p50_ms = Number(report.p50_ms.toFixed(3));
      out.p95_ms = Number(report.p95_ms.toFixed(3));
      process.stdout.write(`${JSON.stringify(out)}\n`);
    } else {
      process.stdout.write(`mode ${mode}, ${report.questions} questions\n`);
      for (const k of ks) process.stdout.write(`recall@${k}: ${(report.recall[k]! * 100).toFixed(1)}%\n`);
      process.stdout.write(`search latency p50 ${report.p50_ms.toFixed(2)} ms, p95 ${report.p95_ms.toFixed(2)} ms\n`);
      for (const [cat, c] of Object.entries(report.byCategory)) {
        process.stdout.write(`  ${cat.padEnd(18)} ${String(c.questions).padStart(4)} q  ${ks.map((k) => `@${k} ${(c.recall[k]! * 100).toFixed(1)}%`).join('  ')}\n`);
      }
    }
    return 0;
  }
  const { config, problems } = loadConfig({ OPENAI_API_KEY: 'unused-by-this-command', ...process.env });
  if (problems.length > 0) {
    for (const p of problems) process.stderr.write(`config: ${p}\n`);
    return 2;
  }
  if (cmd === 'usage') return (await import('./usage-report.js')).runUsageCommand(args, config);
  const log = createLogger({ level: process.env.LOG_LEVEL ?? 'warn' });
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
