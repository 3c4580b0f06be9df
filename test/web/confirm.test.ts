/** The memory page's line diff (the MEMORY.md save preview) and its one-use preview tokens. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lineDiff } from '../../src/web/diff.js';
import { CONFIRM_TTL_MS, Confirmations } from '../../src/web/confirm.js';

const ops = (a: string, b: string) => lineDiff(a, b).lines.map((l) => `${l.op}${l.text}`);

test('line diff: the lines a save adds and removes, in order, with the unchanged ones between', () => {
  assert.deepEqual(ops('a\nb\nc\n', 'a\nB\nc\nd\n'), ['=a', '-b', '+B', '=c', '+d']);
  assert.deepEqual(ops('', 'x\n'), ['+x']);
  assert.deepEqual(ops('x\ny\n', ''), ['-x', '-y']);
  assert.deepEqual(ops('same\n', 'same'), ['=same'], 'a missing last newline is no change (the save adds it)');
  const d = lineDiff('1\n2\n3\n4\n', '0\n1\n3\n4\n5\n');
  assert.deepEqual([d.added, d.removed], [2, 1]);
  // Far bigger than a MEMORY.md: still exact about what goes and what comes.
  const big = Array.from({ length: 3000 }, (_, i) => `line ${i}`);
  const huge = lineDiff(big.join('\n'), big.map((l) => `${l}!`).join('\n'));
  assert.deepEqual([huge.added, huge.removed], [3000, 3000]);
});

test('preview tokens: used once, only for what was previewed, and not after CONFIRM_TTL_MS', () => {
  let now = 1_000;
  const c = new Confirmations(() => now);
  const t = c.issue('forget\0test:1\0bees');
  assert.equal(c.take(t, 'forget\0test:1\0honey'), false, 'other words');
  assert.equal(c.take(t, 'forget\0test:1\0bees'), false, 'used up by the wrong try');
  const u = c.issue('forget\0test:1\0bees');
  assert.equal(c.take(true, 'forget\0test:1\0bees'), false);
  assert.equal(c.take(u, 'forget\0test:1\0bees'), true);
  assert.equal(c.take(u, 'forget\0test:1\0bees'), false, 'once');
  const v = c.issue('x');
  now += CONFIRM_TTL_MS + 1;
  assert.equal(c.take(v, 'x'), false, 'too old');
});
