import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lookupModel } from '../../src/llm/catalogue.js';

test('an exact name matches its own entry', () => {
  assert.deepEqual(lookupModel('gpt-4o'), {
    matched: 'gpt-4o',
    maxInputTokens: 128000,
    encoding: 'o200k_base',
    vision: { kind: 'tiles', base: 85, tile: 170 },
  });
  assert.deepEqual(lookupModel('gpt-4'), { matched: 'gpt-4', maxInputTokens: 8192, encoding: 'cl100k_base', vision: null });
  // A longer name that is itself in the catalogue is not folded into its family.
  assert.equal(lookupModel('gpt-4o-mini').matched, 'gpt-4o-mini');
  assert.equal(lookupModel('o3-mini').matched, 'o3-mini');
});

test('names are matched case-insensitively', () => {
  assert.equal(lookupModel('GPT-4o').matched, 'gpt-4o');
});

test('a provider prefix is ignored (OpenRouter style)', () => {
  assert.deepEqual(lookupModel('openai/gpt-4o'), {
    matched: 'gpt-4o',
    maxInputTokens: 128000,
    encoding: 'o200k_base',
    vision: { kind: 'tiles', base: 85, tile: 170 },
  });
  assert.equal(lookupModel('openrouter/openai/gpt-4.1-mini').matched, 'gpt-4.1-mini');
});

test('a dated variant maps to its longest known family, not a shorter one', () => {
  const info = lookupModel('gpt-4o-2024-08-06');
  assert.equal(info.matched, 'gpt-4o');
  assert.equal(info.maxInputTokens, 128000, 'not the 8k of gpt-4');
  assert.equal(lookupModel('gpt-4o-mini-2024-07-18').matched, 'gpt-4o-mini');
  assert.equal(lookupModel('gpt-4-turbo-2024-04-09').matched, 'gpt-4-turbo');
  assert.equal(lookupModel('gpt-4-0613').matched, 'gpt-4');
  assert.equal(lookupModel('openai/gpt-4o-2024-08-06').matched, 'gpt-4o');
});

test('a name that only shares leading characters with an entry is not matched by it', () => {
  // "gpt-4o" must not match "gpt-4" (no "-" after the family name), nor "o3" match "o3xyz".
  assert.notEqual(lookupModel('gpt-4omega').matched, 'gpt-4');
  assert.equal(lookupModel('o3xyz').matched, null);
});

test('an unknown model gets the conservative default with matched null', () => {
  assert.deepEqual(lookupModel('llama3.1:8b'), { matched: null, maxInputTokens: 32768, encoding: null, vision: null });
  assert.deepEqual(lookupModel('meta-llama/llama-3.1-70b-instruct'), { matched: null, maxInputTokens: 32768, encoding: null, vision: null });
});
