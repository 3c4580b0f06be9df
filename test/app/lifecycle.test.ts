/**
 * The daemon's stop (src/app/lifecycle.ts): the parts go down in the reverse order they were
 * built — nothing hand-orders it — every part first stops taking work, and only then is
 * anything closed, knowing whether the running turns ended.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Lifecycle } from '../../src/app/lifecycle.js';
import { buildParts } from '../../src/app/build.js';
import { silentLogger } from '../../src/core/log.js';
import { tempDir, testConfig } from '../helpers/workspace.js';

test('the stop runs every part’s stop, last built first, then every close in the same order; a stop that left work running makes the closes see drained=false', async () => {
  const done: string[] = [];
  const life = new Lifecycle();
  life.add({ name: 'queue', stop: () => (done.push('stop queue'), false), close: ({ drained }) => void done.push(`close queue drained=${drained}`) });
  life.add({ name: 'store', close: async ({ drained }) => void done.push(`close store drained=${drained}`) });
  life.add({ name: 'timer', stop: async () => void done.push('stop timer') });
  assert.deepEqual(await life.stop(), { drained: false });
  assert.deepEqual(done, ['stop timer', 'stop queue', 'close store drained=false', 'close queue drained=false']);
  const calm = new Lifecycle();
  calm.add({ name: 'queue', stop: () => true });
  assert.deepEqual(await calm.stop(), { drained: true });
});

test('the daemon’s parts are added as they are built: the dispatcher first (so it stops last, waiting for the turns once nothing else takes work), then the stores (closed after every part built from them), the session store closed last', async () => {
  const ws = await tempDir();
  const life = new Lifecycle();
  try {
    await buildParts(testConfig({ WORKSPACE_DIR: ws.dir, OPENAI_BASE_URL: 'http://127.0.0.1:9' }), silentLogger(), {}, life);
    assert.deepEqual(life.parts(), ['dispatcher', 'sessions', 'usage', 'index', 'inbox', 'nightly jobs', 'reminders']);
  } finally {
    await life.stop();
    await ws.cleanup();
  }
});
