/**
 * One daemon per workspace (src/storage/daemon-lock.ts): a second daemon is refused while the
 * first runs; a pid left by a daemon that is gone — dead, or reused by an unrelated program —
 * does not lock the owner out, and the locks the dead daemon left are cleared.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { acquireDaemonLock, isDaemonAlive } from '../../src/storage/daemon-lock.js';
import { tempDir } from '../helpers/workspace.js';

/** A live process whose command line does (or does not) look like our daemon's. */
async function sleeper(looksLikeDaemon: boolean): Promise<ChildProcess & { pid: number }> {
  const args = ['-e', 'setTimeout(() => {}, 60000)', ...(looksLikeDaemon ? ['src/main.ts'] : [])];
  const child = spawn(process.execPath, args, { stdio: 'ignore' });
  await new Promise((resolve, reject) => child.once('spawn', resolve).once('error', reject));
  return child as ChildProcess & { pid: number };
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

test('a second daemon on the same workspace is refused with the running one named; its pid file is left alone', async () => {
  const ws = await tempDir();
  const other = await sleeper(true);
  try {
    const pidFile = path.join(ws.dir, 'daemon.pid');
    await writeFile(pidFile, `${other.pid}\n`);
    await assert.rejects(acquireDaemonLock(ws.dir), (err: Error) => {
      assert.match(err.message, new RegExp(`another daemon \\(pid ${other.pid}\\) is already using`));
      assert.match(err.message, /stop it first, or set WORKSPACE_DIR/);
      return true;
    });
    assert.equal(await readFile(pidFile, 'utf8'), `${other.pid}\n`);
  } finally {
    other.kill('SIGKILL');
    await ws.cleanup();
  }
});

test('risk: pid reuse — a recorded pid now running another program does not lock the owner out; stale locks are cleared', async () => {
  const ws = await tempDir();
  const stranger = await sleeper(false);
  try {
    assert.equal(isDaemonAlive(stranger.pid), false, 'alive, but not our daemon');
    const pidFile = path.join(ws.dir, 'daemon.pid');
    await writeFile(pidFile, `${stranger.pid}\n`);
    const stale = path.join(ws.dir, 'sessions', 'test:1.json.lock');
    await mkdir(stale, { recursive: true });
    const lock = await acquireDaemonLock(ws.dir);
    assert.equal(lock.removedLocks, 1);
    assert.equal(await exists(stale), false, "the dead daemon's session lock is gone");
    assert.equal(await readFile(pidFile, 'utf8'), `${process.pid}\n`);
    await lock.release();
    assert.equal(await exists(pidFile), false);
  } finally {
    stranger.kill('SIGKILL');
    await ws.cleanup();
  }
});

test('a pid that no longer exists is taken over; release leaves a pid file that names another daemon', async () => {
  const ws = await tempDir();
  try {
    const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    const pid = gone.pid!;
    await new Promise((resolve) => gone.once('exit', resolve));
    assert.equal(isDaemonAlive(pid), false);
    const pidFile = path.join(ws.dir, 'daemon.pid');
    await writeFile(pidFile, `${pid}\n`);
    const lock = await acquireDaemonLock(ws.dir);
    assert.equal(lock.removedLocks, 0);
    // Someone else took the workspace since (the file names them): release must not delete it.
    await writeFile(pidFile, '999999\n');
    await lock.release();
    assert.equal(await readFile(pidFile, 'utf8'), '999999\n');
  } finally {
    await ws.cleanup();
  }
});
