/**
 * Installing the features (src/app/install.ts): what the features bring goes into the pipeline,
 * the router and the registry in a known order, and two of one name are refused when the daemon
 * starts, not found out by a user at run time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { installFeatures } from '../../src/app/install.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { ORDER } from '../../src/turn/order.js';
import type { Feature } from '../../src/turn/feature.js';
import type { Command } from '../../src/turn/command.js';
import type { System } from '../../src/turn/system.js';
import type { Tool } from '../../src/tools/types.js';
import { isAppError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import { startTestBot } from '../helpers/app.js';

const command = (name: string): Command => ({ name, description: name, access: 'everyone', run: async () => name });
const system = (name: keyof typeof ORDER): System => ({ name, order: ORDER[name], onFailure: 'skip', run: async () => undefined });
const tool = (name: string): Tool => ({ name, description: name, parameters: { type: 'object', properties: {} }, execute: () => name });
const install = (features: Feature[], tools = new ToolRegistry()) =>
  installFeatures(features, { own: [command('new')], tools, adminsManage: false, log: silentLogger() });
const refusedWith = (problem: RegExp) => (err: unknown) => isAppError(err) && problem.test(err.message);

test('a feature’s commands follow /help and /new in the order the features are listed; its tools go to the registry in that order; its systems run in ORDER', () => {
  const tools = new ToolRegistry();
  const { commands, pipeline } = install(
    [
      { name: 'b', systems: [system('Indexing')], commands: [command('two'), command('three')], tools: [tool('t2')] },
      { name: 'a', systems: [system('Transcription')], commands: [command('one')], tools: [tool('t1')] },
      { name: 'c' },
    ],
    tools,
  );
  assert.deepEqual(
    commands.list().map((c) => c.name),
    ['help', 'new', 'two', 'three', 'one'],
  );
  assert.deepEqual(tools.names(), ['t2', 't1']);
  assert.deepEqual(
    pipeline.systems.map((s) => s.name),
    ['Transcription', 'Indexing'],
  );
});

test('two features of one name, two commands of one name, two systems on one number or two tools of one name are refused at start', () => {
  assert.throws(() => install([{ name: 'a' }, { name: 'a' }]), refusedWith(/feature a is installed twice/));
  assert.throws(
    () =>
      install([
        { name: 'a', commands: [command('memory')] },
        { name: 'b', commands: [command('memory')] },
      ]),
    refusedWith(/command \/memory is installed twice/),
  );
  assert.throws(
    () => install([{ name: 'a', commands: [command('new')] }]),
    refusedWith(/command \/new is installed twice/),
    'not even over one that is no feature’s',
  );
  assert.throws(
    () =>
      install([
        { name: 'a', systems: [system('Images')] },
        { name: 'b', systems: [system('Images')] },
      ]),
    refusedWith(/both have order 15/),
  );
  assert.throws(
    () =>
      install([
        { name: 'a', tools: [tool('x')] },
        { name: 'b', tools: [tool('x')] },
      ]),
    refusedWith(/tool x is registered twice/),
  );
});

test('the daemon as built: every system of the ORDER table installed once, /help and the commands in their documented order', async () => {
  const bot = await startTestBot();
  try {
    assert.deepEqual(
      bot.app.pipeline.systems.map((s) => s.name),
      Object.keys(ORDER),
    );
    assert.deepEqual(
      bot.app.commands.list().map((c) => c.name),
      ['help', 'new', 'compact', 'status', 'memory', 'forget', 'export', 'why', 'reminders', 'model', 'stop'],
    );
    assert.deepEqual(bot.app.parts.tools.names().slice(0, 2), ['get_current_time', 'memory_read'], 'the answer feature’s tool first, then memory access’s');
  } finally {
    await bot.close();
  }
});
