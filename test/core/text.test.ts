import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collapseLineBreaks } from '../../src/core/text.js';
import { seededRandom as rng } from '../helpers/random.js';

test('collapseLineBreaks does what /\\s*\\n\\s*/g → " " did, on 20,000 random texts', () => {
  const next = rng(3);
  const pieces = ['a', 'b c', ' ', '  ', '\t', '\n', '\n\n', '\r\n', ' \n ', '\u00a0', '\u2028', 'x\ty'];
  for (let t = 0; t < 20_000; t++) {
    let s = '';
    for (let k = Math.floor(next() * 10); k >= 0; k--) s += pieces[Math.floor(next() * pieces.length)];
    assert.equal(collapseLineBreaks(s), s.replace(/\s*\n\s*/g, ' '), JSON.stringify(s));
  }
});
