/**
 * The session log (src/sessions/wal.ts): a turn's messages are durable once logged, before the
 * session file is rewritten. A process killed in between loses nothing, and a replay never
 * brings back what `/new` or a compaction removed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileSessionStore } from '../../src/sessions/file-store.js';
import { captureLog, tempDir } from '../helpers/workspace.js';
import { waitFor } from '../helpers/wait.js';

const src = (p: string) => JSON.stringify(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', p));

/** Runs `body` against a store in a child process that is then killed with SIGKILL. */
function runThenKill(dir: string, body: string): void {
  const script = `
    import { FileSessionStore } from ${src('sessions/file-store.ts')};
    import { makeMessage } from ${src('sessions/model.ts')};
    import { silentLogger } from ${src('core/log.ts')};
    const store = new FileSessionStore(${JSON.stringify(dir)}, silentLogger());
    await store.init();
    const s = await store.getOrCreate('test', 'k');
    ${body}
    process.kill(process.pid, 'SIGKILL');
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.signal, 'SIGKILL', `child did not reach the kill: ${r.stderr}`);
}

async function reopen(dir: string): Promise<{ store: FileSessionStore; logs: ReturnType<typeof captureLog> }> {
  const logs = captureLog();
  const store = new FileSessionStore(dir, logs.log);
  await store.init();
  return { store, logs };
}

test('risk: a kill after the answer is logged but before the session file is rewritten loses the exchange — the next start restores it', async () => {
  const ws = await tempDir();
  try {
    const dir = path.join(ws.dir, 'sessions');
    runThenKill(
      dir,
      `
      await store.writer(s).append(makeMessage('user', 'my locker code is 4711'));
      await store.writer(s).append(makeMessage('assistant', 'noted'));
    `,
    );
    const { store, logs } = await reopen(dir);
    const s = await store.getOrCreate('test', 'k');
    assert.deepEqual(
      s.messages.map((m) => m.content),
      ['my locker code is 4711', 'noted'],
    );
    // Written to the file at once, and the log emptied: a second start restores nothing twice.
    const file = JSON.parse(await readFile(path.join(dir, 'test:k.json'), 'utf8'));
    assert.deepEqual(
      file.messages.map((m: { content: string }) => m.content),
      ['my locker code is 4711', 'noted'],
    );
    assert.ok(logs.lines().some((l) => /restored messages/.test(l.msg)));
    const again = await reopen(dir);
    assert.equal((await again.store.getOrCreate('test', 'k')).messages.length, 2);
  } finally {
    await ws.cleanup();
  }
});

test('risk: a replay after /new brings the cleared conversation back — only what came after /new returns', async () => {
  const ws = await tempDir();
  try {
    const dir = path.join(ws.dir, 'sessions');
    runThenKill(
      dir,
      `
      await store.writer(s).append(makeMessage('user', 'old one'));
      await store.writer(s).append(makeMessage('assistant', 'old answer'));
      await store.writer(s).clear();
      await store.writer(s).append(makeMessage('user', 'fresh start'));
    `,
    );
    const { store } = await reopen(dir);
    assert.deepEqual(
      (await store.getOrCreate('test', 'k')).messages.map((m) => m.content),
      ['fresh start'],
    );
  } finally {
    await ws.cleanup();
  }
});

test('risk: a checkpoint still writing when the answer is logged leaves the user message in neither place — the kill loses it and the turn runs (and replies) again', async () => {
  const ws = await tempDir();
  try {
    const dir = path.join(ws.dir, 'sessions');
    // The user message is recorded (in memory only), a rewrite of the file takes it and then
    // stalls (another holder has the file lock), the answer is logged, and the process dies
    // before the rewrite lands. The log line must carry the user message itself.
    runThenKill(
      dir,
      `
      const lockfile = (await import('proper-lockfile')).default;
      await lockfile.lock(store.fileFor('test', 'k'), { realpath: false });
      store.writer(s).record(makeMessage('user', 'remind me at noon'));
      void store.save(s).catch(() => undefined);
      await new Promise((r) => setImmediate(r));
      await store.writer(s).append(makeMessage('assistant', 'will do'));
    `,
    );
    const { store } = await reopen(dir);
    assert.deepEqual(
      (await store.getOrCreate('test', 'k')).messages.map((m) => m.content),
      ['remind me at noon', 'will do'],
    );
  } finally {
    await ws.cleanup();
  }
});

test('the session file catches up on its own shortly after a logged message, without a flush', async () => {
  const ws = await tempDir();
  try {
    const dir = path.join(ws.dir, 'sessions');
    const store = new FileSessionStore(dir, captureLog().log);
    await store.init();
    const s = await store.getOrCreate('test', 'k');
    await store.writer(s).append({ id: 'm_1', role: 'user', content: 'hello', timestamp: new Date().toISOString() });
    const file = path.join(dir, 'test:k.json');
    await waitFor(async () => (await readFile(file, 'utf8').catch(() => '')).includes('hello'), 2_000, 'the message in the session file');
    await store.close();
  } finally {
    await ws.cleanup();
  }
});

test('risk: a session-log line written with a malformed tool call (an older version) brings it back at replay — repaired as it is read', async () => {
  const ws = await tempDir();
  try {
    const dir = path.join(ws.dir, 'sessions');
    const bad = {
      seq: 1,
      channelType: 'test',
      chatId: 'k',
      messages: [
        { id: 'm1', role: 'user', content: 'time?', timestamp: '2026-01-01T10:00:00.000Z' },
        { id: 'm2', role: 'assistant', content: null, timestamp: '2026-01-01T10:00:01.000Z', toolCalls: [{ id: 'c1', name: null, arguments: { tz: 'UTC' } }] },
        { role: 'wizard', content: 7 },
      ],
    };
    await mkdir(ws.dir, { recursive: true });
    await writeFile(`${dir}.wal.jsonl`, `${JSON.stringify(bad)}\n`);
    const { store } = await reopen(dir);
    const s = await store.getOrCreate('test', 'k');
    assert.deepEqual(
      s.messages.map((m) => m.role),
      ['user', 'assistant'],
      'the unreadable message is skipped',
    );
    const call = s.messages[1]!;
    assert.equal(call.content, '');
    assert.equal(typeof call.toolCalls![0]!.name, 'string');
    assert.equal(call.toolCalls![0]!.arguments, '{"tz":"UTC"}');
  } finally {
    await ws.cleanup();
  }
});
