/**
 * CI guard of retrieval quality on real conversations (issue 12): every `*.json` in
 * `../shared/datasets/` (beside the repository; `MEMBOT_DATASETS_DIR` points elsewhere) is
 * evaluated with `runCompare`, the function behind `npm run memory -- eval --compare` (the
 * precision of # Relevant Memory is left to that command; small talk is tested in
 * rank-signals.test.ts). The
 * files are read where they are and never copied. Skipped when the folder does not exist; CI
 * always has it. Not a timing test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { loadDataset, runCompare } from '../../src/index/eval.js';

const dir = process.env.MEMBOT_DATASETS_DIR ?? path.resolve('..', 'shared', 'datasets');
const files = existsSync(dir)
  ? readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
  : [];
const pts = (x: number) => `${(x * 100).toFixed(1)}`;

test('the shared datasets are there to guard retrieval (CI has them)', { skip: files.length === 0 ? `no datasets in ${dir}` : false }, () => {
  assert.ok(files.length >= 1);
});

for (const file of files) {
  test(`risk: default search falls behind plain BM25 on real conversations — ${file}: at least the baseline at recall@5/@10/@20, recall@5 at least 5 points above it`, async () => {
    const r = runCompare(await loadDataset(path.join(dir, file)), [5, 10, 20], 'all', { relevant: false });
    assert.ok(r.hybrid.questions > 0);
    const table = [5, 10, 20].map((k) => `@${k} ${pts(r.hybrid.recall[k]!)} vs ${pts(r.bm25.recall[k]!)}`).join(', ');
    for (const k of [5, 10, 20]) assert.ok(r.hybrid.recall[k]! >= r.bm25.recall[k]!, `${file}: default below baseline (${table})`);
    assert.ok(r.hybrid.recall[5]! >= r.bm25.recall[5]! + 0.05, `${file}: recall@5 less than 5 points above baseline (${table})`);
    // The target is recall@10 >= 0.60; not reached: 0.564 (realtalk) and 0.577 (beam-100k)
    // on the report halves, 0.584 and 0.559 on the whole files (docs/BENCHMARKS.md, issue 12
    // fourth pass). So this is a floor just under today's figures, not the target.
    assert.ok(r.hybrid.recall[10]! >= 0.55, `${file}: recall@10 ${pts(r.hybrid.recall[10]!)} below the 55.0 floor (${table})`);
  });
}
