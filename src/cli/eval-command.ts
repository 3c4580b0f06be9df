/**
 * `npm run memory -- eval <dataset.json>...`: retrieval recall@k and search latency on one or
 * more datasets (format: shared/docs/retrieval-eval.md). `--compare` runs the plain-BM25
 * baseline and the default search over the same ingested conversations and prints them side by
 * side, overall and per category, as a Markdown table (or one JSON object per file).
 */
import path from 'node:path';
import {
  loadDataset,
  runCompare,
  runEval,
  SMALL_TALK,
  type CompareReport,
  type EvalMode,
  type EvalReport,
  type EvalSplit,
  type RelevantPrecision,
} from '../index/eval.js';
import { RELEVANT_LIMIT } from '../index/search/relevant.js';
import { runComparePg } from '../index/pg/eval-pg.js';

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

const VALUE_FLAGS = ['--k', '--mode', '--split'];
const pct = (x: number) => (x * 100).toFixed(1);

function figures(report: EvalReport, ks: number[], categories = true): Record<string, unknown> {
  const out: Record<string, unknown> = { questions: report.questions };
  for (const k of ks) out[`recall@${k}`] = Number(report.recall[k]!.toFixed(4));
  out.p50_ms = Number(report.p50_ms.toFixed(3));
  out.p95_ms = Number(report.p95_ms.toFixed(3));
  if (!categories) return out;
  out.categories = Object.fromEntries(
    Object.entries(report.byCategory).map(([cat, c]) => [
      cat,
      { questions: c.questions, ...Object.fromEntries(ks.map((k) => [`recall@${k}`, Number(c.recall[k]!.toFixed(4))])) },
    ]),
  );
  return out;
}

/** One line on what `# Relevant Memory` injects for the questions and for small talk. */
function relevantLine(p: RelevantPrecision): string {
  const share = p.lines ? `${pct(p.evidence / p.lines)}%` : 'n/a';
  return `${p.lines} lines, ${p.evidence} evidence: precision ${share}; nothing for ${p.empty} questions; small talk: ${p.smallTalkLines} lines`;
}

export function relevantSummary(r: CompareReport, conversations: number): string {
  return [
    `\`# Relevant Memory\` (top ${RELEVANT_LIMIT} per question; small talk = ${SMALL_TALK.length} messages × ${conversations} conversations):`,
    `- without the bar: ${r.relevant ? relevantLine(r.relevant.withoutBar) : 'not measured'}`,
    `- with the bar:    ${r.relevant ? relevantLine(r.relevant.withBar) : 'not measured'}`,
  ].join('\n');
}

/** The --compare table: one row overall, one per category, one for latency. */
export function compareTable(title: string, r: Record<EvalMode, EvalReport>, ks: number[]): string {
  const head = `| ${title} | questions | ${ks.map((k) => `baseline @${k}`).join(' | ')} | ${ks.map((k) => `default @${k}`).join(' | ')} |`;
  const rule = `|---|---:|${ks.map(() => '---:').join('|')}|${ks.map(() => '---:').join('|')}|`;
  const row = (name: string, b: { questions: number; recall: Record<number, number> }, h: { recall: Record<number, number> }) =>
    `| ${name} | ${b.questions} | ${ks.map((k) => pct(b.recall[k]!)).join(' | ')} | ${ks
      .map((k) => {
        const d = h.recall[k]! - b.recall[k]!;
        return `${pct(h.recall[k]!)} (${d >= 0 ? '+' : '−'}${Math.abs(d * 100).toFixed(1)})`;
      })
      .join(' | ')} |`;
  const lines = [head, rule, row('**all**', r.bm25, r.hybrid)];
  for (const [cat, b] of Object.entries(r.bm25.byCategory).sort(([a], [b]) => a.localeCompare(b))) lines.push(row(cat, b, r.hybrid.byCategory[cat]!));
  const lat = (e: EvalReport) => `p50 ${e.p50_ms.toFixed(2)} ms, p95 ${e.p95_ms.toFixed(2)} ms`;
  lines.push(`| search latency | | ${lat(r.bm25)}${' | '.repeat(ks.length)}${lat(r.hybrid)}${' | '.repeat(ks.length - 1)} |`);
  return lines.join('\n');
}

export async function runEvalCommand(args: string[], usage: string): Promise<number> {
  const files = args.filter((a, i) => !a.startsWith('--') && !VALUE_FLAGS.includes(args[i - 1] ?? ''));
  const ks = (flag(args, '--k') ?? '5,10,20')
    .split(',')
    .map(Number)
    .filter((k) => Number.isInteger(k) && k > 0);
  const mode = (flag(args, '--mode') ?? 'hybrid') as EvalMode;
  const split = (flag(args, '--split') ?? 'all') as EvalSplit;
  const compare = args.includes('--compare');
  const json = args.includes('--json');
  if (files.length === 0) {
    process.stderr.write(`eval needs at least one dataset file\n${usage}\n`);
    return 2;
  }
  if (ks.length === 0 || (mode !== 'hybrid' && mode !== 'bm25') || !['all', 'tune', 'report'].includes(split) || (compare && args.includes('--mode'))) {
    process.stderr.write('eval: --k takes whole numbers like 5,10,20, --mode hybrid or bm25 (not with --compare), --split all, tune or report\n');
    return 2;
  }
  for (const file of files) {
    const data = await loadDataset(path.resolve(file));
    const name = path.basename(file);
    const half = `${split === 'all' ? 'all conversations' : `${split} half`}${compare && process.env.DATABASE_URL ? ', PostgreSQL' : ''}`;
    if (compare) {
      // With DATABASE_URL: written to PostgreSQL and searched in a cache rebuilt from it (PgMemoryIndex).
      const url = process.env.DATABASE_URL;
      const r = url ? await runComparePg(url, data, ks, split) : runCompare(data, ks, split);
      if (json)
        process.stdout.write(
          `${JSON.stringify({ file: name, split, baseline: figures(r.bm25, ks), default: figures(r.hybrid, ks), relevantMemory: r.relevant })}\n`,
        );
      else process.stdout.write(`${compareTable(`${name}, ${half}`, r, ks)}\n\n${relevantSummary(r, r.conversations)}\n\n`);
      continue;
    }
    const report = runEval(data, ks, mode, split);
    if (json) {
      // One flat object per file with exactly the keys of the eval spec (a "file" key first when several).
      process.stdout.write(`${JSON.stringify({ ...(files.length > 1 ? { file: name } : {}), ...figures(report, ks, false) })}\n`);
      continue;
    }
    process.stdout.write(`${files.length > 1 ? `${name}: ` : ''}mode ${mode}, ${half}, ${report.questions} questions\n`);
    for (const k of ks) process.stdout.write(`recall@${k}: ${pct(report.recall[k]!)}%\n`);
    process.stdout.write(`search latency p50 ${report.p50_ms.toFixed(2)} ms, p95 ${report.p95_ms.toFixed(2)} ms\n`);
    for (const [cat, c] of Object.entries(report.byCategory)) {
      process.stdout.write(`  ${cat.padEnd(18)} ${String(c.questions).padStart(4)} q  ${ks.map((k) => `@${k} ${pct(c.recall[k]!)}%`).join('  ')}\n`);
    }
  }
  return 0;
}
