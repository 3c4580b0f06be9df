/**
 * The nightly schedule (src/app/jobs.ts): every upkeep job is on node-cron at its hour in
 * the configured time zone, stop() takes them all off, and a job never runs twice at once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import cron from 'node-cron';
import { Scheduler, SCHEDULE } from '../../src/app/jobs.js';
import { JOB_NAMES, Upkeep } from '../../src/index/upkeep/upkeep.js';
import { SqliteMemoryIndex } from '../../src/index/sqlite-memory-index.js';
import { LlmClient } from '../../src/llm/client.js';
import { silentLogger } from '../../src/core/log.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { captureLog, tempDir, testConfig } from '../helpers/workspace.js';

test('each upkeep job has one valid nightly schedule', () => {
  assert.deepEqual(SCHEDULE.map((s) => s.job).sort(), [...JOB_NAMES].sort());
  for (const s of SCHEDULE) assert.ok(cron.validate(s.cron), `${s.job}: ${s.cron}`);
});

test('start() schedules every job in the configured time zone; stop() takes them off', async () => {
  const ws = await tempDir();
  const llm = await startFakeLlm();
  const index = new SqliteMemoryIndex(path.join(ws.dir, 'memory.db'), silentLogger());
  const logs = captureLog();
  const scheduler = new Scheduler(
    new Upkeep(index, new LlmClient(testConfig({ OPENAI_BASE_URL: llm.url }), silentLogger()), silentLogger()),
    'Asia/Tokyo',
    logs.log,
  );
  try {
    scheduler.start();
    const tasks = cron.getTasks();
    for (const s of SCHEDULE) {
      const task = [...tasks.values()].find((t) => t.name === `upkeep-${s.job}`);
      assert.ok(task, `${s.job} is scheduled`);
      const next = task.getNextRun();
      assert.ok(next, `${s.job} has a next run`);
      // 02:00, 03:00, 04:00 in Tokyo (UTC+9, no summer time) are 17:00, 18:00, 19:00 UTC.
      const hour = Number(s.cron.split(' ')[1]);
      assert.equal(next.getUTCHours(), (hour + 24 - 9) % 24, `${s.job} runs at ${hour}:00 Tokyo time`);
      if (s.job === 'reflection') assert.equal(new Date(next.getTime() + 9 * 3600_000).getUTCDay(), 0, 'reflection on Sundays');
    }
    assert.match(logs.text(), /nightly jobs scheduled/);
    const ours = [...tasks.values()].filter((t) => t.name?.startsWith('upkeep-'));
    assert.ok(
      ours.every((t) => t.getStatus() === 'idle'),
      'waiting for their hour',
    );
    await scheduler.stop();
    assert.deepEqual(
      ours.map((t) => t.getStatus()),
      SCHEDULE.map(() => 'stopped'),
    );
  } finally {
    await scheduler.stop();
    index.close();
    await llm.close();
    await ws.cleanup();
  }
});

test('runNow skips a job that is still running, with a log line; other jobs go ahead', async () => {
  const ws = await tempDir();
  const llm = await startFakeLlm();
  const index = new SqliteMemoryIndex(path.join(ws.dir, 'memory.db'), silentLogger());
  const logs = captureLog();
  try {
    // The second call arrives while the first is still under way (the cron and a CLI run, say).
    const scheduler = new Scheduler(
      new Upkeep(index, new LlmClient(testConfig({ OPENAI_BASE_URL: llm.url }), silentLogger()), silentLogger()),
      'UTC',
      logs.log,
    );
    const [first, second, decay] = await Promise.all([scheduler.runNow('reflection'), scheduler.runNow('reflection'), scheduler.runNow('decay')]);
    assert.ok(first);
    assert.equal(second, null);
    assert.ok(decay, 'another job is not blocked');
    assert.match(logs.text(), /reflection is still running; this run is skipped/);
    assert.ok(await scheduler.runNow('reflection'), 'once finished it runs again');
  } finally {
    index.close();
    await llm.close();
    await ws.cleanup();
  }
});
