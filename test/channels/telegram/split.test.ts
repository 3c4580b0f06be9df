import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitMessage, hardCut, TELEGRAM_MESSAGE_LIMIT } from '../../../src/channels/telegram/split.js';
import { renderTelegramHtml, visibleLength } from '../../../src/channels/telegram/render.js';
import { patient } from '../../helpers/wait.js';

const words = (s: string) => s.split(/\s+/).filter(Boolean);

/** Every chunk fits, and nothing of the text was lost or reordered. */
function assertFaithful(text: string, chunks: string[], limit: number): void {
  for (const c of chunks) assert.ok(c.length <= limit, `chunk of ${c.length} > ${limit}`);
  assert.ok(
    chunks.every((c) => c.trim() !== ''),
    'no empty chunk',
  );
  assert.deepEqual(words(chunks.join('\n')), words(text));
}

test('a short text is one chunk, unchanged', () => {
  assert.deepEqual(splitMessage('hello\n\nworld'), ['hello\n\nworld']);
  assert.deepEqual(splitMessage(''), []);
});

test('splits at paragraph boundaries first', () => {
  const p = (ch: string) => ch.repeat(30);
  const text = [p('a'), p('b'), p('c'), p('d')].join('\n\n');
  const chunks = splitMessage(text, 70);
  assert.deepEqual(chunks, [`${p('a')}\n\n${p('b')}`, `${p('c')}\n\n${p('d')}`]);
});

test('a paragraph longer than a message splits between lines, then between words', () => {
  const lines = Array.from({ length: 10 }, (_, i) => `line ${i} ${'x'.repeat(20)}`);
  const chunks = splitMessage(lines.join('\n'), 64);
  assertFaithful(lines.join('\n'), chunks, 64);
  for (const c of chunks) for (const l of c.split('\n')) assert.ok(lines.includes(l), `whole lines only: ${l}`);

  const sentence = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
  const parts = splitMessage(sentence, 50);
  assertFaithful(sentence, parts, 50);
  for (const c of parts) for (const w of words(c)) assert.match(w, /^word\d+$/, 'no word is cut');
});

test('only a single word longer than a message is cut, and never through a surrogate pair', () => {
  const long = '😀'.repeat(40); // 80 UTF-16 units
  const chunks = splitMessage(long, 33);
  for (const c of chunks) {
    assert.ok(c.length <= 33);
    assert.ok(!/[\uD800-\uDBFF]$/.test(c) && !/^[\uDC00-\uDFFF]/.test(c), 'no half emoji');
  }
  assert.equal(chunks.join(''), long);
  assert.deepEqual(hardCut('abcdef', 4), ['abcd', 'ef']);
});

test('a code block that fits stays whole in one chunk, even when that needs a new chunk', () => {
  const code = `\`\`\`js\n${Array.from({ length: 5 }, (_, i) => `let v${i} = ${i};`).join('\n')}\n\`\`\``;
  const text = `${'p'.repeat(60)}\n\n${code}\n\nafter`;
  const chunks = splitMessage(text, 100);
  assert.ok(
    chunks.some((c) => c.includes(code)),
    `the block is intact in one chunk: ${JSON.stringify(chunks)}`,
  );
  assertFaithful(text, chunks, 100);
});

test('a code block longer than a message is cut between its lines and each piece is re-fenced', () => {
  const body = Array.from({ length: 60 }, (_, i) => `  print("line ${i} <ok>")`);
  const text = `Intro\n\n\`\`\`python\n${body.join('\n')}\n\`\`\`\n\nOutro`;
  const limit = 200;
  const chunks = splitMessage(text, limit);
  assert.ok(chunks.length > 3);
  const codeLines: string[] = [];
  for (const c of chunks) {
    assert.ok(c.length <= limit);
    const opens = (c.match(/^```python$/gm) ?? []).length;
    const fences = (c.match(/^```/gm) ?? []).length;
    assert.equal(fences, opens * 2, `every opened fence closes in the same chunk: ${JSON.stringify(c)}`);
    const html = renderTelegramHtml(c);
    assert.equal((html.match(/<pre>/g) ?? []).length, (html.match(/<\/pre>/g) ?? []).length, 'never split inside <pre>');
    assert.ok(visibleLength(html) <= limit);
    for (const m of c.matchAll(/^```python\n([\s\S]*?)\n```$/gm)) codeLines.push(...m[1]!.split('\n'));
  }
  assert.deepEqual(codeLines, body, 'all code lines, in order, indentation kept');
});

test('10,000 characters of prose become ordered chunks of at most 4096', () => {
  const paras = Array.from({ length: 50 }, (_, i) => `Paragraph ${i}: ${'lorem ipsum '.repeat(16).trim()}.`);
  const text = paras.join('\n\n');
  assert.ok(text.length >= 10_000);
  const chunks = splitMessage(text);
  assert.ok(chunks.length >= 3);
  assertFaithful(text, chunks, TELEGRAM_MESSAGE_LIMIT);
  assert.equal(chunks.join('\n\n'), text, 'boundaries fall between paragraphs');
});

test('risk: a 200,000-character answer of spaces or tabs freezes every chat while it is split (quadratic trailing-space trim)', () => {
  for (const text of [`${' '.repeat(200_000)}x`, `${' \t'.repeat(100_000)}x`, `a${'\t'.repeat(200_000)}b`]) {
    const t0 = performance.now();
    const chunks = splitMessage(text);
    const ms = performance.now() - t0;
    // A generous bound: the quadratic code took minutes here; linear code takes milliseconds.
    assert.ok(ms < patient(10_000), `${ms.toFixed(0)} ms to split ${JSON.stringify(text.slice(0, 6))}…`);
    for (const c of chunks) assert.ok(c.length <= TELEGRAM_MESSAGE_LIMIT);
    assert.ok(chunks.join('').includes(text.trim().slice(-1)), 'the words are kept');
  }
});
