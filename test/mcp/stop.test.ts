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
import net from 'node:net';
import path from 'node:path';
import { startMcpBot } from '../helpers/mcp.js';
import { childEnv, mainTs, spawnCollected, tsxLoader } from '../helpers/child.js';
import { tempDir } from '../helpers/workspace.js';
import { waitFor } from '../helpers/wait.js';

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
    await waitFor(async () => (started = await pids(pidFile)).length === 2, 20_000, 'the wrapper and its child started');
    assert.ok(started.every(running));
    await close();
    await waitFor(() => !started.some(running), 20_000, 'the wrapper and its child gone');
  } finally {
    reap(started);
    await close();
    await dir.cleanup();
  }
});

test('SIGTERM before "daemon started" (Telegram not answering yet): the daemon stops cleanly, exit 0, and no MCP process is left', {
  timeout: 90_000,
}, async () => {
  const dir = await tempDir('membot-mcp-');
  const pidFile = path.join(dir.dir, 'pids');
  const file = path.join(dir.dir, 'mcp.json');
  await writeFile(file, JSON.stringify({ servers: { wrapped: stubborn(pidFile) } }));
  // A Bot API that takes the connection and never answers: getMe, and so the start, waits.
  const held = new Set<net.Socket>();
  const silent = net.createServer((s) => held.add(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const daemon = spawnCollected(process.execPath, ['--import', tsxLoader, mainTs], {
    cwd: dir.dir,
    env: childEnv({
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      OPENAI_API_KEY: 'sk-test-key-123456',
      WORKSPACE_DIR: path.join(dir.dir, 'workspace'),
      TELEGRAM_BOT_TOKEN: '123456:test-token',
      TELEGRAM_API_ROOT: `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`,
      LOG_LEVEL: 'info',
      MCP_CONFIG: file,
    }),
    timeoutMs: 80_000,
  });
  let started: number[] = [];
  try {
    await waitFor(async () => (started = await pids(pidFile)).length === 2, 40_000, 'the MCP server started');
    await waitFor(() => held.size > 0, 40_000, 'getMe sent');
    assert.ok(!daemon.out().includes('daemon started'), 'still starting');
    daemon.signal('SIGTERM');
    const code = await daemon.exited;
    assert.equal(code, 0, daemon.err());
    assert.match(daemon.out(), /"msg":"\[Main\] stopped"/);
    assert.ok(!daemon.out().includes('daemon started'));
    await waitFor(() => !started.some(running), 20_000, 'the wrapper and its child gone');
  } finally {
    daemon.kill();
    reap(started);
    for (const s of held) s.destroy();
    silent.close();
    await dir.cleanup();
  }
});
