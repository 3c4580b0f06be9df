/** How the memory page names a chat: the kept name, else a stand-in its id tells; a topic points at its group. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chatLabel } from '../../src/web/data.js';
import { chatShapes } from '../../src/app/channels.js';
import type { ChatName } from '../../src/sessions/names.js';

test('chat labels: kept names first; stand-ins for Telegram ids never seen with a name; the terminal is "Terminal"', () => {
  const book = new Map<string, ChatName>([
    ['telegram:42', { kind: 'private', name: 'Ada Lovelace' }],
    ['telegram:-100', { kind: 'group', name: 'Beekeepers' }],
    ['telegram:-100:7', { kind: 'topic', name: 'Honey sales', parent: 'telegram:-100' }],
    ['test:9', { kind: 'group', name: 'Test group' }],
  ]);
  const names = { get: (k: string) => book.get(k) };
  assert.deepEqual(chatLabel(names, 'telegram', '42', chatShapes()), { name: 'Ada Lovelace', named: true, kind: 'private', parent: undefined });
  assert.deepEqual(chatLabel(names, 'telegram', '-100:7', chatShapes()), {
    name: 'Honey sales',
    named: true,
    kind: 'topic',
    parent: { key: 'telegram:-100', name: 'Beekeepers', named: true },
  });
  assert.deepEqual(chatLabel(names, 'telegram', '-100:8', chatShapes()), {
    name: 'Topic 8',
    named: false,
    kind: 'topic',
    parent: { key: 'telegram:-100', name: 'Beekeepers', named: true },
  });
  assert.deepEqual(chatLabel(names, 'telegram', '-200:3', chatShapes()), {
    name: 'Topic 3',
    named: false,
    kind: 'topic',
    parent: { key: 'telegram:-200', name: 'Group', named: false },
  });
  assert.deepEqual(chatLabel(names, 'telegram', '-200', chatShapes()), { name: 'Group', named: false, kind: 'group', parent: undefined });
  assert.deepEqual(chatLabel(names, 'telegram', '77', chatShapes()), { name: 'Private chat', named: false, kind: 'private', parent: undefined });
  assert.deepEqual(chatLabel(names, 'console', 'local', chatShapes()), { name: 'Terminal', named: false, kind: 'private', parent: undefined });
  assert.deepEqual(chatLabel(names, 'test', '9', chatShapes()), { name: 'Test group', named: true, kind: 'group', parent: undefined });
  assert.deepEqual(chatLabel(names, 'test', '1', chatShapes()), { name: 'test 1', named: false, kind: 'chat', parent: undefined });
});
