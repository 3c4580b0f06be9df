/**
 * Guards retrieval quality on the repository's own generated set (issue 12): the default search
 * is at least as good as the plain-BM25 baseline at recall@5, @10 and @20, from one run over the
 * same ingested conversations. The real conversations are guarded by datasets.test.ts.
 * Not a timing test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadDataset, runCompare } from '../../src/index/eval.js';

const dataset = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'retrieval', 'dataset.json');

test('risk: default search worse than plain BM25 — on the own set it is at least as good at recall@5, @10 and @20', async () => {
  const r = runCompare(await loadDataset(dataset), [5, 10, 20]);
  assert.ok(r.hybrid.questions >= 300);
  for (const k of [5, 10, 20]) {
    const [b, h] = [r.bm25.recall[k]!, r.hybrid.recall[k]!];
    assert.ok(h >= b, `recall@${k}: default ${(h * 100).toFixed(1)}% below baseline ${(b * 100).toFixed(1)}%`);
  }
});
