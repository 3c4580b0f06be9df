/**
 * Daily notes: the line format `[HH:mm] User: {text} | Assistant: {text}` (seed 001 "Daily
 * Notes"), the cuts (user 200, assistant 300 characters), newlines, emoji at the cut, and which
 * day's file a message lands in for the configured time zone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { formatNoteLine, localDate } from '../../src/memory/notes.js';
import { startTestBot } from '../helpers/app.js';
import { text } from '../helpers/fake-llm.js';

const AT = new Date('2026-03-01T12:05:00Z');
const LINE_RE = /^\[(\d{2}:\d{2})\] User: (.*) \| Assistant: (.*)$/s;

function parts(line: string): { time: string; user: string; assistant: string } {
  const m = LINE_RE.exec(line);
  assert.ok(m, `not a note line: ${line}`);
  return { time: m[1]!, user: m[2]!, assistant: m[3]! };
}

function hasLoneSurrogate(s: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}

function graphemes(s: string): string[] {
  return Array.from(new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(s), (x) => x.segment);
}

test('a note line has the exact seed format', () => {
  assert.equal(
    formatNoteLine(AT, 'UTC', 'How do I configure Docker?', 'Add a healthcheck.'),
    '[12:05] User: How do I configure Docker? | Assistant: Add a healthcheck.',
  );
});

test('the user part is cut to exactly 200 characters and the assistant part to exactly 300', () => {
  const user = 'u'.repeat(150) + 'U'.repeat(150);
  const assistant = 'a'.repeat(250) + 'A'.repeat(250);
  const p = parts(formatNoteLine(AT, 'UTC', user, assistant));
  assert.equal(p.user.length, 200);
  assert.equal(p.user, user.slice(0, 200));
  assert.equal(p.assistant.length, 300);
  assert.equal(p.assistant, assistant.slice(0, 300));
});

test('texts at or under the limits are kept whole', () => {
  const user = 'x'.repeat(200);
  const assistant = 'y'.repeat(300);
  const p = parts(formatNoteLine(AT, 'UTC', user, assistant));
  assert.equal(p.user, user);
  assert.equal(p.assistant, assistant);
  const short = parts(formatNoteLine(AT, 'UTC', 'hi', 'hello'));
  assert.deepEqual([short.user, short.assistant], ['hi', 'hello']);
});

test('newlines (\\n and \\r\\n) become single spaces, so a note is always one line', () => {
  const line = formatNoteLine(AT, 'UTC', 'first\nsecond\r\nthird', 'one\r\ntwo\nthree\n');
  assert.doesNotMatch(line, /[\r\n]/);
  const p = parts(line);
  assert.equal(p.user, 'first second third');
  assert.equal(p.assistant, 'one two three ');
});

test('an emoji (surrogate pair) at the cut boundary is kept whole, never half', () => {
  // 199 letters then an emoji: the emoji is character 200 and must survive intact.
  const user = `${'a'.repeat(199)}😀tail`;
  const assistant = `${'b'.repeat(299)}🎉tail`;
  const p = parts(formatNoteLine(AT, 'UTC', user, assistant));
  assert.equal(p.user, `${'a'.repeat(199)}😀`);
  assert.equal(p.assistant, `${'b'.repeat(299)}🎉`);
  assert.equal(Array.from(p.user).length, 200);
  assert.equal(Array.from(p.assistant).length, 300);
  assert.ok(!hasLoneSurrogate(p.user) && !hasLoneSurrogate(p.assistant));
  // 200 letters then an emoji: the emoji is cut entirely, no stray surrogate left.
  const p2 = parts(formatNoteLine(AT, 'UTC', `${'a'.repeat(200)}😀`, 'ok'));
  assert.equal(p2.user, 'a'.repeat(200));
});

test('a multi-code-point emoji (flag, ZWJ family) at the cut boundary is not split', () => {
  // 🇩🇪 is two code points; 👨‍👩‍👧 is five. Cutting between them leaves a lone regional
  // indicator or a dangling zero-width joiner: a broken emoji in the note and the prompt.
  for (const emoji of ['🇩🇪', '👨‍👩‍👧']) {
    const original = `${'a'.repeat(199) + emoji}tail`;
    const p = parts(formatNoteLine(AT, 'UTC', original, 'ok'));
    const wholePrefix = graphemes(original).slice(0, graphemes(p.user).length).join('');
    assert.ok(p.user === wholePrefix, `the cut split ${emoji}: the note's user text ends with ${JSON.stringify(p.user.slice(-4))}`);
  }
});

test('the time and date of a note follow the configured time zone', () => {
  const at = new Date('2026-03-01T23:30:00Z');
  assert.equal(localDate(at, 'Asia/Tokyo'), '2026-03-02');
  assert.equal(parts(formatNoteLine(at, 'Asia/Tokyo', 'u', 'a')).time, '08:30');
  assert.equal(localDate(at, 'America/New_York'), '2026-03-01');
  assert.equal(parts(formatNoteLine(at, 'America/New_York', 'u', 'a')).time, '18:30');
});

for (const c of [
  { tz: 'Asia/Tokyo', file: '2026-03-02.md', other: '2026-03-01.md', time: '08:30' },
  { tz: 'America/New_York', file: '2026-03-01.md', other: '2026-03-02.md', time: '18:30' },
]) {
  test(`end to end with TZ=${c.tz}: 23:30Z on 1 March lands in ${c.file} at [${c.time}]`, async () => {
    const bot = await startTestBot({ env: { TZ: c.tz }, responder: () => text('Sure.\nTwo lines of answer.') });
    try {
      const receivedAt = new Date('2026-03-01T23:30:00Z');
      const replies = await bot.send('1', 'Good night\nsee you', { receivedAt });
      assert.deepEqual(replies, ['Sure.\nTwo lines of answer.']);
      const dir = path.join(bot.workspace, 'memory', 'test:1');
      assert.deepEqual(
        (await readdir(dir)).filter((n) => n.endsWith('.md')),
        [c.file],
      );
      const content = await readFile(path.join(dir, c.file), 'utf8');
      assert.equal(content, `[${c.time}] User: Good night see you | Assistant: Sure. Two lines of answer.\n`);

      // A second exchange a minute later: one more line, nothing else.
      await bot.send('1', 'and again', { receivedAt: new Date('2026-03-01T23:31:00Z') });
      const lines = (await readFile(path.join(dir, c.file), 'utf8')).split('\n');
      assert.equal(lines.pop(), '', 'file ends with a newline');
      assert.equal(lines.length, 2);
      assert.equal(lines[0], content.trimEnd());
      assert.match(lines[1]!, new RegExp(`^\\[${c.time.slice(0, 3)}31\\] User: and again \\| Assistant: Sure\\. Two lines of answer\\.$`));
      await assert.rejects(readFile(path.join(dir, c.other), 'utf8'), { code: 'ENOENT' });
    } finally {
      await bot.close();
    }
  });
}

test('end to end: long messages are cut in the note file and commands write no note', async () => {
  const longAnswer = `${'A'.repeat(280)}\n${'B'.repeat(100)}`;
  const bot = await startTestBot({ responder: () => text(longAnswer) });
  try {
    const receivedAt = new Date('2026-03-05T09:15:00Z');
    const userText = 'Q'.repeat(500);
    assert.deepEqual(await bot.send('2', userText, { receivedAt }), [longAnswer], 'the reply itself is not cut');
    await bot.send('2', '/status', { receivedAt });
    await bot.send('2', '/help', { receivedAt });
    const file = path.join(bot.workspace, 'memory', 'test:2', '2026-03-05.md');
    const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
    assert.equal(lines.length, 1, 'one exchange, one line; commands are not notes');
    const p = parts(lines[0]!);
    assert.equal(p.time, '09:15');
    assert.equal(p.user, 'Q'.repeat(200));
    assert.equal(p.assistant, `${'A'.repeat(280)} ${'B'.repeat(19)}`);
    assert.equal(p.assistant.length, 300);
  } finally {
    await bot.close();
  }
});
