/** What the stores that keep JSON lines or text files take words out with (storage/redaction.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { redactFile, redactJsonLines } from '../../src/storage/redaction.js';
import { Phrase } from '../../src/features/privacy/phrase.js';
import { tempDir } from '../helpers/workspace.js';

test("JSON lines: the words are redacted in every string of this chat's lines only; a torn line holding them goes", () => {
  const p = new Phrase('secret  WORD');
  const lines = [
    JSON.stringify({ chatId: '1', text: 'my secret word', nested: { list: ['Secret Word'] } }),
    JSON.stringify({ chatId: '2', text: 'secret word' }),
    '{"torn": "secret word',
    '{"torn": "other"',
  ].join('\n');
  assert.equal(
    redactJsonLines(lines, p, (l) => l.chatId === '1'),
    [
      JSON.stringify({ chatId: '1', text: 'my [forgotten]', nested: { list: ['[forgotten]'] } }),
      JSON.stringify({ chatId: '2', text: 'secret word' }),
      '{"torn": "other"',
    ].join('\n'),
  );
});

test('a text file: redacted in place when it holds the words, left as it is otherwise', async () => {
  const ws = await tempDir();
  try {
    const file = path.join(ws.dir, 'a.md');
    await writeFile(file, 'one secret word\ntwo\n');
    assert.equal(await redactFile(file, new Phrase('secret word')), true);
    assert.equal(await readFile(file, 'utf8'), 'one [forgotten]\ntwo\n');
    assert.equal(await redactFile(file, new Phrase('secret word')), false);
    assert.equal(await redactFile(path.join(ws.dir, 'missing.md'), new Phrase('secret word')), false);
  } finally {
    await ws.cleanup();
  }
});
