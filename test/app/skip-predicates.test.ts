/**
 * Each system's skip predicate, taken from the daemon as built (createApp) and asked directly:
 * when a step runs and when it stands aside is behaviour a user notices (a failed turn must not
 * be written to the notes or the index; memory.enabled=false must write nothing).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SystemName } from '../../src/turn/order.js';
import { createTurn, type Turn } from '../../src/turn/turn.js';
import { makeMessage, newSession } from '../../src/sessions/model.js';
import { silentLogger } from '../../src/core/log.js';
import { startTestBot, unsavedWriter, type TestBot } from '../helpers/app.js';

function turn(fields: Partial<Pick<Turn, 'response' | 'answer' | 'failure'>> = {}): Turn {
  const t = createTurn({
    inbound: { channel: 'test', chatId: '1', userId: 'u1', text: 'hi', receivedAt: new Date() },
    writes: unsavedWriter(newSession('test', '1')),
    log: silentLogger(),
    userMessage: makeMessage('user', 'hi'),
    reply: async () => undefined,
  });
  return Object.assign(t, fields);
}

/** Whether the daemon's system `name` would run on this turn (no predicate: always). */
function runs(bot: TestBot, name: SystemName, t: Turn): boolean {
  const system = bot.app.pipeline.systems.find((s) => s.name === name);
  assert.ok(system, `${name} is registered`);
  return system.shouldRun ? system.shouldRun(t) : true;
}

const answered = () => turn({ response: 'an answer', answer: makeMessage('assistant', 'an answer') });
const failed = () =>
  turn({ response: 'an answer', answer: makeMessage('assistant', 'an answer'), failure: { system: 'ToolLoop', errorId: 'e1', code: 'llm.unreachable' } });

test('with everything on: context and the tool loop always run; delivery, notes and indexing need an answer, and notes and indexing a turn that did not fail', async () => {
  const bot = await startTestBot();
  try {
    for (const name of ['AutoCompaction', 'ContextBuilding', 'ToolLoop'] as const) assert.equal(runs(bot, name, turn()), true, name);
    assert.equal(runs(bot, 'ResponseDelivery', turn()), false, 'nothing to deliver');
    assert.equal(runs(bot, 'ResponseDelivery', answered()), true);
    for (const name of ['MemoryPersist', 'Indexing'] as const) {
      assert.equal(runs(bot, name, turn()), false, `${name}: no answer`);
      assert.equal(runs(bot, name, answered()), true, `${name}: answered`);
      assert.equal(runs(bot, name, failed()), false, `${name}: the turn failed`);
    }
  } finally {
    await bot.close();
  }
});

test('compaction.enabled=false skips AutoCompaction; memory.enabled=false skips MemoryPersist; an index that is off skips Indexing', async () => {
  const bot = await startTestBot({ runtimeConfig: { compaction: { enabled: false }, memory: { enabled: false } } });
  try {
    assert.equal(runs(bot, 'AutoCompaction', answered()), false);
    assert.equal(runs(bot, 'MemoryPersist', answered()), false);
    assert.equal(runs(bot, 'Indexing', answered()), true, 'the index is still on');
    bot.app.parts.index.close();
    assert.equal(runs(bot, 'Indexing', answered()), false);
    assert.equal(runs(bot, 'ResponseDelivery', answered()), true, 'the answer is still delivered');
  } finally {
    await bot.close();
  }
});
