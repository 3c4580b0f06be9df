import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chatKey, parseChatKey } from '../../src/core/chat.js';

test('a chat key is the channel, a colon and the chat id, and reads back to the same chat (a topic id keeps its colon)', () => {
  assert.equal(chatKey({ channel: 'console', chatId: 'local' }), 'console:local');
  for (const chat of [
    { channel: 'console', chatId: 'local' },
    { channel: 'telegram', chatId: '-100123:7' },
    { channel: 'x', chatId: 'a:b:c' },
  ])
    assert.deepEqual(parseChatKey(chatKey(chat)), chat);
  // Extra fields of the value (a message) are not part of the key.
  assert.equal(chatKey({ channel: 'telegram', chatId: '42', text: 'hi' } as { channel: string; chatId: string }), 'telegram:42');
});

test('a key with no channel or no chat id is not a chat', () => {
  for (const bad of ['', 'local', ':42', 'telegram:', 'global']) assert.equal(parseChatKey(bad), undefined, bad);
});
