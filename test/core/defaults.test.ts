import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withDefaults } from '../../src/core/defaults.js';

test('withDefaults: a set field wins, an undefined one keeps the default', () => {
  const merged = withDefaults({ a: 1, b: 2 }, { a: 5, b: undefined });
  assert.deepEqual(merged, { a: 5, b: 2 });
});

test('withDefaults: fields the defaults do not know are dropped, and the defaults are not changed', () => {
  const defaults = { a: 1 };
  const merged = withDefaults(defaults, { a: 3, other: 9 } as { a: number });
  assert.deepEqual(merged, { a: 3 });
  assert.deepEqual(defaults, { a: 1 });
  assert.deepEqual(withDefaults(defaults, undefined), { a: 1 });
});
