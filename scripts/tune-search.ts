/**
 * Learns the ranking weights of src/index/search/rank.ts on the tune halves of the dev sets, and
 * checks any set of weights on either half. The datasets are read where they are (never copied):
 *
 *   npx tsx scripts/tune-search.ts ../shared/datasets/*.json test/fixtures/retrieval/dataset.json --split tune --ascent
 *   npx tsx scripts/tune-search.ts <files> --split report --set reply=0.2 --set speaker=0.3
 *
 * --ascent: coordinate ascent from the defaults (plus any --set), one weight at a time over a
 * small grid, keeping a change only when the objective rises: mean over files of
 * (recall@5 + recall@10 + recall@20) / 3, with every file weighing the same, less what any
 * category loses beyond 3 points below the baseline (times --floor-weight, default 1).
 * Prints the figures per file beside the baseline of the same half, then the weights as JSON.
 */
import path from 'node:path';
import { closeAll, evaluate, loadDataset, prepare, SEARCHES, type EvalSplit, type PreparedConversation, type EvalReport } from '../src/index/eval.js';
import { DEFAULT_WEIGHTS, type RankWeights } from '../src/index/search/rank.js';

const KS = [5, 10, 20];
const args = process.argv.slice(2);
const flagValues = (name: string) => args.flatMap((a, i) => (args[i - 1] === name ? [a] : []));
const split = (flagValues('--split')[0] ?? 'tune') as EvalSplit;
/** `--only a b c` (as the docs write it) and `--only a --only b` both name weights: every word after `--only` up to the next flag. */
const onlyAt = new Set<number>();
args.forEach((a, i) => {
  if (a !== '--only') return;
  for (let j = i + 1; j < args.length && !args[j]!.startsWith('--') && !args[j]!.endsWith('.json'); j++) onlyAt.add(j);
});
const files = args.filter((a, i) => !a.startsWith('--') && !onlyAt.has(i) && !['--split', '--set', '--floor-weight'].includes(args[i - 1] ?? ''));
/** How much a category's loss beyond 3 points below the baseline costs in the objective (1: its share of the mean). */
const floorWeight = Number(flagValues('--floor-weight')[0] ?? 1);

const GRID: Partial<Record<keyof RankWeights, Array<number | boolean>>> = {
  speaker: [0.3, 0.5, 0.8, 1.2],
  speakerTermDropped: [false, true],
  date: [0, 0.2, 0.4],
  dateNext: [0, 0.3, 0.5, 1],
  shape: [0, 0.05, 0.1, 0.2, 0.3],
  dateSpeaker: [false, true],
  reply: [0, 0.05, 0.1, 0.2],
  replySeeds: [5, 10, 20],
  replyOtherSpeaker: [false, true],
  context: [0, 0.05, 0.1, 0.2, 0.4],
  contextWindow: [1, 2, 3, 5],
  question: [0, 0.05, 0.1, 0.2, 0.3],
  entity: [0, 0.05, 0.1, 0.2, 0.4],
  recency: [0, 0.05, 0.1, 0.2, 0.4],
  recencyPool: [10, 20, 40],
  length: [0, 0.05, 0.1, 0.2, 0.3],
  prf: [0, 0.05, 0.1, 0.2, 0.4],
  prfDocs: [3, 5, 10],
  assistant: [0.3, 0.5, 0.7, 0.85, 1],
  aroundSeeds: [0, 5, 10, 20, 40],
  aroundWindow: [1, 2, 3, 5],
  pair: [0, 0.1, 0.2, 0.4, 0.6, 0.8],
  framing: [false, true],
  irregular: [false, true],
  diversity: [0, 0.05, 0.1, 0.2, 0.3],
  diversityWindow: [3, 5, 10, 20],
};

function parseSet(w: RankWeights, kv: string): RankWeights {
  const [k, v] = kv.split('=') as [keyof RankWeights, string];
  if (!(k in w)) throw new Error(`unknown weight ${k}`);
  return { ...w, [k]: v === 'true' ? true : v === 'false' ? false : Number(v) };
}

interface Loaded {
  name: string;
  prepared: PreparedConversation[];
  baseline: EvalReport;
}

const mean3 = (r: EvalReport) => KS.reduce((s, k) => s + r.recall[k]!, 0) / KS.length;

function run(sets: Loaded[], w: RankWeights): EvalReport[] {
  return sets.map((s) => evaluate(s.prepared, (index, q, scope, limit) => index.search(q, { scope, limit, weights: w }), KS));
}

/**
 * Mean of the files' mean recall, less what any category lost beyond 3 points below the
 * baseline (the issue's floor), so a gain overall cannot hide a category that drops.
 */
function objective(reports: EvalReport[], sets: Loaded[]): number {
  let loss = 0;
  reports.forEach((r, i) => {
    const b = sets[i]!.baseline;
    const cats = Object.keys(b.byCategory);
    for (const cat of cats)
      for (const k of KS) loss += Math.max(0, b.byCategory[cat]!.recall[k]! - 0.03 - r.byCategory[cat]!.recall[k]!) / (cats.length * KS.length);
  });
  return (reports.reduce((s, r) => s + mean3(r), 0) - floorWeight * loss) / reports.length;
}

function show(sets: Loaded[], reports: EvalReport[]): void {
  const f = (x: number) => (x * 100).toFixed(1).padStart(5);
  reports.forEach((r, i) => {
    const b = sets[i]!.baseline;
    process.stdout.write(
      `${sets[i]!.name.padEnd(22)} ${String(r.questions).padStart(4)} q  baseline ${KS.map((k) => f(b.recall[k]!)).join(' ')}   default ${KS.map((k) => f(r.recall[k]!)).join(' ')}   (${KS.map((k) => `${r.recall[k]! >= b.recall[k]! ? '+' : ''}${((r.recall[k]! - b.recall[k]!) * 100).toFixed(1)}`).join(' ')})\n`,
    );
    for (const [cat, c] of Object.entries(r.byCategory).sort(([a], [z]) => a.localeCompare(z))) {
      const bc = b.byCategory[cat]!;
      const low = KS.some((k) => c.recall[k]! < bc.recall[k]! - 0.03) ? '  <-- more than 3 below' : '';
      process.stdout.write(
        `   ${cat.padEnd(26)} ${String(c.questions).padStart(4)}  ${KS.map((k) => f(bc.recall[k]!)).join(' ')}   ${KS.map((k) => f(c.recall[k]!)).join(' ')}${low}\n`,
      );
    }
  });
}

async function main(): Promise<void> {
  let w: RankWeights = { ...DEFAULT_WEIGHTS };
  for (const kv of flagValues('--set')) w = parseSet(w, kv);
  const sets: Loaded[] = [];
  for (const file of files) {
    const prepared = prepare(await loadDataset(path.resolve(file)), split);
    sets.push({ name: path.basename(file), prepared, baseline: evaluate(prepared, SEARCHES.bm25, KS) });
  }
  let reports = run(sets, w);
  let best = objective(reports, sets);
  process.stdout.write(`split ${split}: objective ${best.toFixed(4)}\n`);
  if (args.includes('--ascent')) {
    const only = [...onlyAt].map((i) => args[i]!);
    for (let round = 0; round < 3; round++) {
      let moved = false;
      for (const [key, values] of Object.entries(GRID) as Array<[keyof RankWeights, Array<number | boolean>]>) {
        if (only.length > 0 && !only.includes(key)) continue;
        for (const v of values) {
          if (w[key] === v) continue;
          const trial = { ...w, [key]: v };
          const rs = run(sets, trial);
          const o = objective(rs, sets);
          if (o > best + 1e-4) {
            [w, best, reports, moved] = [trial, o, rs, true];
            process.stdout.write(`  ${key} = ${v}: ${o.toFixed(4)}\n`);
          }
        }
      }
      if (!moved) break;
    }
  }
  show(sets, reports);
  process.stdout.write(`${JSON.stringify(w)}\n`);
  for (const s of sets) closeAll(s.prepared);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
