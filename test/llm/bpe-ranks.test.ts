/**
 * The BPE tables are built from gpt-tokenizer's `.tiktoken` files (llm/bpe-ranks.ts) instead of
 * importing its generated modules, to save the daemon's memory: the tables must be the same,
 * token for token, or every count drifts (the counts themselves are checked against js-tiktoken
 * in tokens.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadBpeRanks } from '../../src/llm/bpe-ranks.js';

for (const encoding of ['o200k_base', 'cl100k_base'] as const) {
  test(`${encoding}: the table read from the .tiktoken file is the package's generated one, rank for rank`, async () => {
    const generated = ((await import(`gpt-tokenizer/bpeRanks/${encoding}`)) as { default: Array<string | number[]> }).default;
    const ranks = await loadBpeRanks(encoding);
    assert.equal(ranks.length, generated.length);
    let differ = 0;
    let first = -1;
    for (let i = 0; i < generated.length; i++) {
      if (JSON.stringify(ranks[i]) !== JSON.stringify(generated[i])) {
        differ++;
        if (first < 0) first = i;
      }
    }
    assert.equal(differ, 0, `${differ} ranks differ, the first at ${first}: ${JSON.stringify(ranks[first])} vs ${JSON.stringify(generated[first])}`);
    assert.ok(
      generated.some((t) => Array.isArray(t)),
      'the table has tokens that are not UTF-8 (kept as bytes)',
    );
  });
}
