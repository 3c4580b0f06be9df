/**
 * `npm run bench [-- section ...]` — prints each figure with the machine it was measured on.
 * Sections: tokens, compaction, index (add --full for the 1M-episode run), index-pg (the same in
 * PostgreSQL mode, on a throwaway cluster), pipeline, pipeline-pg (its overhead per turn with
 * DATABASE_URL beside the embedded mode) (streamed answers
 * included; `stream` runs only those), memory (`--daemon`: the built daemon alone), forget, cost,
 * longtext, cluster (turns per second with 1, 2 and 3 daemon processes on one PostgreSQL).
 */
import os from 'node:os';
import { benchTokens } from './bench/tokens.js';
import { benchCompaction } from './bench/compaction.js';

const sections: Record<string, () => Promise<Record<string, string>>> = {
  tokens: benchTokens,
  compaction: benchCompaction,
  index: async () => (await import('./bench/index.js')).benchIndex(process.argv.includes('--full')),
  'index-pg': async () => (await import('./bench/index-pg.js')).benchIndexPg(),
  pipeline: async () => (await import('./bench/pipeline.js')).benchPipeline(process.argv.includes('--full')),
  'pipeline-pg': async () => (await import('./bench/pipeline-pg.js')).benchPipelinePg(),
  stream: async () => (await import('./bench/stream.js')).benchStream(),
  memory: async () => (await import('./bench/memory.js')).benchMemory(),
  forget: async () => (await import('./bench/forget.js')).benchForget(),
  cost: async () => (await import('./bench/cost.js')).benchCost(),
  longtext: async () => (await import('./bench/longtext.js')).benchLongText(),
  cluster: async () => (await import('./bench/cluster.js')).benchCluster(),
};

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(
    `usage: npm run bench [-- <section>...] [--full]\n  sections: ${Object.keys(sections).join(', ')} (default: all; minutes each)\n  --full adds the 1M-episode index runs; figures go with the machine they were measured on (docs/BENCHMARKS.md)\n`,
  );
  process.exit(0);
}

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const run = wanted.length ? wanted : Object.keys(sections);
process.stdout.write(
  `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}\n`,
);
process.stdout.write(`command: npm run bench -- ${process.argv.slice(2).join(' ')}\n\n`);
for (const name of run) {
  const fn = sections[name];
  if (!fn) {
    process.stderr.write(`unknown section ${name}; sections: ${Object.keys(sections).join(', ')}\n`);
    process.exit(2);
  }
  process.stdout.write(`## ${name}\n`);
  const t0 = performance.now();
  const res = await fn();
  for (const [k, v] of Object.entries(res)) process.stdout.write(`- ${k}: ${v}\n`);
  process.stdout.write(`  (section took ${((performance.now() - t0) / 1000).toFixed(1)} s)\n\n`);
}
process.exit(0);
