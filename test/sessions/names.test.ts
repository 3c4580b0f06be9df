/**
 * The chat names book (sessions/names.ts): the ChatNames contract (names.contract.ts), then on
 * real files: names are kept when seen and survive a
 * restart, a topic's name not sent again is kept, hostile names are made one plain short line,
 * and purge's dropChatNames leaves no byte of a chat's name.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { FileChatNames, MAX_NAME_CHARS, cleanName, dropChatNames } from '../../src/sessions/names.js';
import { silentLogger } from '../../src/core/log.js';
import { tempDir } from '../helpers/workspace.js';
import { fileHarness } from '../helpers/stores.js';
import { chatNamesContract } from './names.contract.js';

describe('FileChatNames meets the ChatNames contract', () =>
  chatNamesContract(() =>
    fileHarness(
      async (dir) => {
        const names = new FileChatNames(path.join(dir, 'sessions.names.json'), silentLogger());
        await names.load();
        return names;
      },
      (names) => names.flush(),
    ),
  ));

test('chat names: kept when seen, across a restart; a topic keeps its name when a later message does not say it; its group is named too', async () => {
  const ws = await tempDir();
  try {
    const file = path.join(ws.dir, 'sessions.names.json');
    const names = new FileChatNames(file, silentLogger());
    await names.load();
    names.note('telegram', '42', { kind: 'private', name: 'Ada Lovelace' });
    names.note('telegram', '-100:7', { kind: 'topic', name: 'Honey sales', group: { chatId: '-100', name: 'Beekeepers' } });
    await names.flush();
    names.note('telegram', '-100:7', { kind: 'topic', group: { chatId: '-100', name: 'Beekeepers' } });
    await names.flush();

    const again = new FileChatNames(file, silentLogger());
    await again.load();
    assert.deepEqual(again.get('telegram:42'), { kind: 'private', name: 'Ada Lovelace' });
    assert.deepEqual(again.get('telegram:-100:7'), { kind: 'topic', name: 'Honey sales', parent: 'telegram:-100' });
    assert.deepEqual(again.get('telegram:-100'), { kind: 'group', name: 'Beekeepers' });

    // A rename is kept; nothing new said: the file is not written again.
    again.note('telegram', '42', { kind: 'private', name: 'Ada King' });
    await again.flush();
    const before = (await stat(file)).mtimeMs;
    again.note('telegram', '42', { kind: 'private', name: 'Ada King' });
    again.note('telegram', '42', undefined);
    await again.flush();
    assert.equal((await stat(file)).mtimeMs, before);
    assert.match(await readFile(file, 'utf8'), /"name": "Ada King"/);
  } finally {
    await ws.cleanup();
  }
});

test('chat names: control, invisible and bidi characters go, runs of spaces become one, the length is capped', () => {
  assert.equal(cleanName('Ada\u0000\u202e\u200b Love\nlace\t '), 'Ada Love lace');
  assert.equal(cleanName(' \u0007 \u2066 '), undefined);
  assert.equal(cleanName(42), undefined);
  const long = cleanName('🐝'.repeat(200))!;
  assert.equal([...long].length, MAX_NAME_CHARS);
  assert.ok(long.endsWith('…'));
  assert.equal(cleanName('<script>alert(1)</script>'), '<script>alert(1)</script>', 'kept as text: the page shows it with textContent');
});

test("chat names: dropChatNames removes a chat's entry and keeps the others; an unreadable book goes whole", async () => {
  const ws = await tempDir();
  try {
    const file = path.join(ws.dir, 'sessions.names.json');
    const names = new FileChatNames(file, silentLogger());
    names.note('test', '1', { kind: 'private', name: 'Plumbob Quill' });
    names.note('test', '2', { kind: 'private', name: 'Kiwi Keeper' });
    await names.flush();
    assert.equal(await dropChatNames(file, ['test:1']), 'entry');
    const text = await readFile(file, 'utf8');
    assert.doesNotMatch(text, /Plumbob|test:1/);
    assert.match(text, /Kiwi Keeper/);
    assert.equal(await dropChatNames(file, ['test:1']), undefined, 'nothing left to drop');

    await writeFile(file, '{"chats": {"test:3": {"kind": "private", "name": "Torn Nam');
    assert.equal(await dropChatNames(file, ['test:3']), 'file');
    await assert.rejects(stat(file), /ENOENT/);
    assert.equal(await dropChatNames(file, ['test:3']), undefined);
  } finally {
    await ws.cleanup();
  }
});
