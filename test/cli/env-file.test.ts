/** .env lines as setup writes them: what dotenv reads back is exactly the value given. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import dotenv from 'dotenv';
import { mergeEnv } from '../../src/cli/env-file.js';
import { isAppError } from '../../src/core/errors.js';

test('values with #, spaces, quotes and backslashes read back unchanged', () => {
  const values = ['sk-plain_KEY.123', 'pass#word', ' spaced out ', "it's", 'say "hi"', 'both \' and "', 'back\\slash', 'http://127.0.0.1:11434/v1', ''];
  for (const v of values) assert.equal(dotenv.parse(mergeEnv('', { K: v })).K, v, JSON.stringify(v));
});

test('the line is replaced where it stands (a commented example is followed), a repeated line dropped', () => {
  const text = '# intro\nA=1\n# B=example\nexport C=old\nC=older\n';
  assert.equal(mergeEnv(text, { C: 'new', B: 'b', D: 'd' }), '# intro\nA=1\n# B=example\nB=b\nC=new\nD=d\n');
});

test('a value .env cannot hold is refused with the setting named, not the value', () => {
  assert.throws(
    () => mergeEnv('', { OPENAI_API_KEY: 'sk-secret\nX=1' }),
    (err) => isAppError(err, 'config.invalid') && /OPENAI_API_KEY/.test(err.message) && !err.message.includes('sk-secret'),
  );
});
