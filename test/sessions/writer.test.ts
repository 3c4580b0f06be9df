/**
 * The session writer owns every change of a session, metadata included (issue 26 item 2): one
 * "already recorded?" rule (sessions/received.ts) behind `receive`, which counts a message in
 * `messagesReceived` once; a compaction's record comes with `replace`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileSessionStore } from '../../src/sessions/file-store.js';
import { silentLogger } from '../../src/core/log.js';
import { makeMessage } from '../../src/sessions/model.js';
import type { InboundMessage } from '../../src/core/message.js';
import { tempDir } from '../helpers/workspace.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(p)));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

test("no code outside src/sessions/ changes a session's metadata (messagesReceived, messagesCompacted, lastCompaction, …)", async () => {
  const found: string[] = [];
  for (const file of await sources(SRC)) {
    if (file.startsWith(path.join(SRC, 'sessions') + path.sep)) continue;
    (await readFile(file, 'utf8')).split('\n').forEach((line, i) => {
      if (/\bmetadata\.\w+\s*(\+\+|--|[-+*]?=(?!=))/.test(line)) found.push(`${path.relative(SRC, file)}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, []);
});

test('receive: a message is recorded and counted once, found again when redelivered, and known as answered once its answer is in', async () => {
  const ws = await tempDir();
  try {
    const store = new FileSessionStore(path.join(ws.dir, 'sessions'), silentLogger());
    await store.init();
    const session = await store.getOrCreate('test', '1');
    const writes = store.writer(session);
    const msg: InboundMessage = { channel: 'test', chatId: '1', userId: 'u', text: 'hello', messageId: '7', receivedAt: new Date('2026-11-24T10:00:00Z') };
    const first = writes.receive(msg);
    assert.deepEqual([first.fresh, first.answered, session.metadata.messagesReceived], [true, false, 1]);
    assert.equal(first.message.timestamp, '2026-11-24T10:00:00.000Z', 'the time the channel received it');
    const again = writes.receive({ ...msg });
    assert.deepEqual([again.fresh, again.answered, again.message, session.metadata.messagesReceived], [false, false, first.message, 1]);
    await writes.append(makeMessage('assistant', 'hi'));
    assert.equal(writes.receive({ ...msg }).answered, true);
    assert.equal(writes.receive({ ...msg, messageId: '8' }).fresh, true, 'another message id is another message');
    assert.equal(session.metadata.messagesReceived, 2);
    await store.close();
  } finally {
    await ws.cleanup();
  }
});
