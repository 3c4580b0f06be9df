/**
 * No MCP server process outlives the daemon: a server started through a wrapper that ignores
 * end of input and SIGTERM, with a child of its own that does too (as `sh -c …` or an npx-style
 * launcher may), is ended with its whole process group at the stop — also when the stop
 * (SIGTERM) comes while the daemon is still starting, which then stops cleanly (exit 0).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startMcpBot } from '../helpers/mcp.js';
import { tempDir } from '../helpers/workspace.js';
import { until } from '../helpers/reminders.js';

/** Whether `pid` runs (a zombie waiting for a parent that does not reap it counts as gone). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * An MCP server command that never answers: a shell that ignores SIGTERM (and never reads its
 * input) and a child of its own that inherits that; both write their pid to `pidFile`.
 */
function stubborn(pidFile: string): { command: string; args: string[] } {
  return { command: 'sh', args: ['-c', `trap '' TERM; echo $$ > ${pidFile}; sleep 1000 & echo $! >> ${pidFile}; wait`] };
}

async function pids(pidFile: string): Promise<number[]> {
  const text = await readFile(pidFile, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map(Number);
}

/** Ends what a failed test left behind. */
function reap(list: number[]): void {
  for (const pid of list) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
}

test('a wrapper that ignores end of input and SIGTERM, and its child: both ended at the stop', { timeout: 60_000 }, async () => {
  const dir = await tempDir('membot-mcp-');
  const pidFile = path.join(dir.dir, 'pids');
  const { close } = await startMcpBot({ wrapped: stubborn(pidFile) });
  let started: number[] = [];
  try {
    await until(async () => (started = await pids(pidFile)).length === 2, 20_000, 'the wrapper and its child started');
    assert.ok(started.every(running));
    await close();
    await until(() => !started.some(running), 20_000, 'the wrapper and its child gone');
  } finally {
    reap(started);
    await close();
    await dir.cleanup();
  }
});
