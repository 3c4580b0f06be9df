/**
 * What the daemon says it holds in memory: `kill -USR2 <pid>` logs one line (the owner of a small
 * machine reads it; `npm run bench -- memory` too), and the figures add up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { memoryReport } from '../../src/core/memory-report.js';
import { childEnv, mainTs, tsxLoader } from '../helpers/child.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { tempDir } from '../helpers/workspace.js';
import { waitFor } from '../helpers/wait.js';

test('the memory report: resident size, the main heap within it, and (Linux) its anonymous and file-backed parts', () => {
  const r = memoryReport();
  assert.ok(r.rss > 10, `resident ${r.rss} MiB`);
  assert.ok(r.heapUsed > 0 && r.heapUsed <= r.heapTotal && r.heapTotal < r.rss, JSON.stringify(r));
  assert.ok((r.spaces.old_space ?? 0) > 0, 'the heap spaces are listed');
  if (process.platform === 'linux') {
    assert.ok(r.anonymous !== undefined && r.fileBacked !== undefined);
    assert.ok(Math.abs(r.anonymous + r.fileBacked - r.rss) < 0.15 * r.rss, `anonymous ${r.anonymous} + file-backed ${r.fileBacked} ≈ resident ${r.rss}`);
  }
});

test('kill -USR2 <pid>: the running daemon logs its memory report and keeps running', async () => {
  const llm = await startFakeLlm();
  const ws = await tempDir();
  const child = spawn(process.execPath, ['--import', tsxLoader, mainTs], {
    cwd: ws.dir,
    env: childEnv({ OPENAI_BASE_URL: llm.url, WORKSPACE_DIR: ws.dir, LOG_LEVEL: 'info' }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const closed = new Promise((r) => child.once('close', r));
  try {
    await waitFor(() => stderr.includes('daemon started') || child.exitCode !== null, 20_000, 'the daemon to start');
    child.kill('SIGUSR2');
    await waitFor(() => stderr.includes('memory report') || child.exitCode !== null || child.signalCode !== null, 10_000, 'the memory report');
    assert.equal(child.signalCode, null, 'the signal did not end the daemon');
    const line = JSON.parse(stderr.split('\n').find((l) => l.includes('memory report'))!);
    assert.ok(line.memory.rss > 10 && line.memory.heapUsed > 0, JSON.stringify(line.memory));
    assert.equal(child.exitCode, null, 'still running');
  } finally {
    child.kill('SIGTERM');
    await closed;
    await llm.close();
    await ws.cleanup();
  }
});
