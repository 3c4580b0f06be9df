import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupOf, isTopic, splitTopic } from '../../src/core/group.js';

test('groupOf: a forum topic belongs to its group; anything else is its own group', () => {
  assert.equal(groupOf('telegram:-100123:7'), 'telegram:-100123');
  assert.equal(groupOf('telegram:-100123'), 'telegram:-100123');
  assert.equal(groupOf('telegram:42'), 'telegram:42');
  // Only `<number>:<number>` is a topic: other chat ids with a colon stay whole.
  assert.equal(groupOf('console:a:b'), 'console:a:b');
  assert.equal(groupOf('telegram:-100123:x'), 'telegram:-100123:x');
  assert.equal(groupOf('*'), '*');
  assert.equal(groupOf('global'), 'global');
  // A group whose id starts with another's digits is another group.
  assert.notEqual(groupOf('telegram:-1001234:5'), groupOf('telegram:-100123:5'));
  assert.equal(isTopic('telegram:-100123:7'), true);
  assert.equal(isTopic('telegram:-100123'), false);
  assert.deepEqual(splitTopic('-100123:7'), { chatId: '-100123', threadId: 7 });
  assert.deepEqual(splitTopic('-100123'), { chatId: '-100123' });
});
