/**
 * One daemon per workspace. `workspace/daemon.pid` names the running daemon; a second one
 * refuses to start (two would race on cached sessions). When the recorded daemon is gone (it
 * was killed), the lock directories it left behind are removed at once, so the restarted daemon
 * does not wait for them to go stale before it can save a session.
 */
import { readFile, readdir, rm, stat, unlink } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic, ensureDir } from './atomic.js';
import { AppError } from '../core/errors.js';
import { WORKSPACE_FILES } from './workspace-files.js';

export function isDaemonAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A live pid may have been reused by an unrelated program: check it runs our entry point.
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return /main\.(js|ts)/.test(cmd);
  } catch {
    return true;
  }
}

async function removeLockDirs(dir: string, depth: number): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let n = 0;
  for (const name of names) {
    const p = path.join(dir, name);
    const st = await stat(p).catch(() => null);
    if (!st?.isDirectory()) continue;
    if (name.endsWith('.lock')) {
      await rm(p, { recursive: true, force: true });
      n++;
    } else if (depth > 0) {
      n += await removeLockDirs(p, depth - 1);
    }
  }
  return n;
}

export interface DaemonLock {
  /** Locks left by a killed daemon that were removed. */
  removedLocks: number;
  release(): Promise<void>;
}

/**
 * Takes the workspace; throws with a one-line reason when another daemon holds it.
 * `channelFolders`: the workspace folders the channels keep their files in (each is named after
 * its channel), whose locks a killed daemon left are removed too.
 */
export async function acquireDaemonLock(workspaceDir: string, channelFolders: readonly string[] = []): Promise<DaemonLock> {
  await ensureDir(workspaceDir);
  const file = path.join(workspaceDir, WORKSPACE_FILES.daemonPid);
  const previous = Number((await readFile(file, 'utf8').catch(() => '')).trim());
  if (isDaemonAlive(previous)) {
    throw new AppError('daemon.already_running', { pid: previous, workspace: workspaceDir });
  }
  let removedLocks = 0;
  if (previous) {
    // The previous daemon died without cleaning up: its locks are orphans.
    removedLocks += await removeLockDirs(path.join(workspaceDir, WORKSPACE_FILES.sessions), 0);
    removedLocks += await removeLockDirs(path.join(workspaceDir, WORKSPACE_FILES.memory), 1);
    for (const folder of channelFolders) removedLocks += await removeLockDirs(path.join(workspaceDir, folder), 0);
  }
  await writeFileAtomic(file, `${process.pid}\n`);
  return {
    removedLocks,
    async release() {
      const cur = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      if (cur === process.pid) await unlink(file).catch(() => undefined);
    },
  };
}
