/**
 * Guards the retrieval quality bar (issue 5): on the repository's dataset, with no embeddings,
 * hybrid search must beat plain FTS5 BM25 recall@10 by at least 10 points. Not a timing test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadDataset, runEval } from '../../src/index/eval.js';

const dataset = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'retrieval', 'dataset.json');

test('risk: hybrid search no better than plain BM25 — hybrid recall@10 beats BM25 by >= 10 points without embeddings', async () => {
  const data = await loadDataset(dataset);
  const bm25 = runEval(data, [10], 'bm25');
  const hybrid = runEval(data, [10], 'hybrid');
  assert.ok(hybrid.questions >= 300);
  const gain = hybrid.recall[10]! - bm25.recall[10]!;
  assert.ok(gain >= 0.1, `hybrid ${(hybrid.recall[10]! * 100).toFixed(1)}% vs BM25 ${(bm25.recall[10]! * 100).toFixed(1)}%: gain ${(gain * 100).toFixed(1)} points`);
});
