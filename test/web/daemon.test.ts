/**
 * The daemon's wiring of the memory page, through the real entry point (src/main.ts) in a child
 * process: off by default, MEMORY_PAGE_PORT starts it, the random token's link is printed once
 * (never in a log line), later starts point to `npm run doctor`, SIGTERM stops it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { tempDir } from '../helpers/workspace.js';
import { patient, waitFor as waitUntil } from '../helpers/wait.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

function startDaemon(env: Record<string, string>, cwd: string) {
  const child = spawn(process.execPath, ['--import', tsxLoader, path.join(repoRoot, 'src', 'main.ts')], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  // Only for a daemon that hangs (counted from the spawn, the start under tsx included).
  const guard = setTimeout(() => child.kill('SIGKILL'), patient(60_000));
  void exited.then(() => clearTimeout(guard));
  const waitFor = async (re: RegExp): Promise<RegExpExecArray> => {
    await waitUntil(() => re.test(stderr), 30_000, `${re} in the daemon's log`).catch(() => assert.fail(`not seen ${re}: ${stderr}`));
    return re.exec(stderr)!;
  };
  return { child, stderr: () => stderr, exited, waitFor };
}

test('daemon: MEMORY_PAGE_PORT starts the page with a random token kept in a 0600 file the start names, never printed; SIGTERM stops it; the next start uses the same token', async () => {
  const llm = await startFakeLlm();
  const ws = await tempDir();
  try {
    const port = await freePort();
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TZ: 'UTC',
      OPENAI_BASE_URL: llm.url,
      WORKSPACE_DIR: ws.dir,
      MEMORY_PAGE_PORT: String(port),
    };
    const first = startDaemon(env, ws.dir);
    const [, url, where] = await first.waitFor(/memory page: (http:\/\/127\.0\.0\.1:\d+\/) — open it with \?token=<the token in (\S+)> \(made just now\)/);
    assert.equal(where, path.join(ws.dir, '.memory-page-token'));
    assert.equal((await stat(where!)).mode & 0o777, 0o600);
    const token = (await readFile(where!, 'utf8')).trim();
    assert.equal((await fetch(`${url}?token=${token}`, { redirect: 'manual' })).status, 303);
    assert.equal((await fetch(`http://127.0.0.1:${port}/api/chats`)).status, 401);
    assert.equal((await fetch(`http://127.0.0.1:${port}/api/chats`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    await assert.rejects(fetch(`http://127.0.0.1:${port}/api/chats`), 'stopped with the daemon');
    assert.ok(!first.stderr().includes(token), 'the token is in no line the daemon wrote');

    const second = startDaemon(env, ws.dir);
    await second.waitFor(/memory page: http:\/\/127\.0\.0\.1:\d+\/ — open it with \?token=<the token in \S+>; npm run doctor prints the whole link/);
    assert.equal(
      (await fetch(`http://127.0.0.1:${port}/api/chats`, { headers: { authorization: `Bearer ${token}` } })).status,
      200,
      'the same token still works',
    );
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);
    assert.ok(!second.stderr().includes(token));
  } finally {
    await llm.close();
    await ws.cleanup();
  }
});
