/**
 * FileSessionStore: the SessionStore contract (store.contract.ts), then what is particular to
 * keeping sessions as files — where a file lies, a corrupt or badly typed file, the cache.
 */
import { describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FileSessionStore } from '../../src/sessions/file-store.js';
import { makeMessage, type Session, type SessionMessage } from '../../src/sessions/model.js';
import { repairToolPairs, tailStart } from '../../src/sessions/integrity.js';
import { captureLog, tempDir, type CapturedLog } from '../helpers/workspace.js';
import { silentLogger } from '../../src/core/log.js';
import { fileHarness } from '../helpers/stores.js';
import { sessionStoreContract } from './store.contract.js';

describe('FileSessionStore meets the SessionStore contract', () =>
  sessionStoreContract(() =>
    fileHarness(
      async (ws) => {
        const store = new FileSessionStore(path.join(ws, 'sessions'), silentLogger());
        await store.init();
        return store;
      },
      (store) => store.close(),
    ),
  ));

async function openStore(): Promise<{ root: string; dir: string; store: FileSessionStore; logs: CapturedLog; cleanup: () => Promise<void> }> {
  const ws = await tempDir();
  // sessions/ sits two levels below the temp root, so an id that escaped with ../../ would
  // still land inside the temp root, where the test can see it (and clean it up).
  const dir = path.join(ws.dir, 'ws', 'sessions');
  const logs = captureLog();
  const store = new FileSessionStore(dir, logs.log);
  await store.init();
  return { root: ws.dir, dir, store, logs, cleanup: ws.cleanup };
}

async function readJson(file: string): Promise<any> {
  return JSON.parse(await readFile(file, 'utf8'));
}

/** Every file below `dir`, as paths relative to it. */
async function walk(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const rel = path.join(prefix, e.name);
    if (e.isDirectory()) out.push(...(await walk(path.join(dir, e.name), rel)));
    else out.push(rel);
  }
  return out.sort();
}

test('getOrCreate loads lazily from disk and caches the same object', async () => {
  const s = await openStore();
  try {
    const file = s.store.fileFor('test', '42');
    assert.equal(file, path.join(s.dir, 'test:42.json'));
    const onDisk = {
      id: 'test:42',
      channelType: 'test',
      chatId: '42',
      messages: [makeMessage('user', 'from disk'), makeMessage('assistant', 'reply from disk')],
      metadata: { conversationId: 'conv_disk', messagesReceived: 1, messagesCompacted: 0 },
      state: 'ACTIVE',
      createdAt: '2024-01-01T00:00:00.000Z',
      updatedAt: '2024-01-01T00:00:00.000Z',
    };
    await writeFile(file, JSON.stringify(onDisk));
    assert.equal(s.store.get('test:42'), undefined, 'nothing is loaded before it is asked for');

    const [a, b] = await Promise.all([s.store.getOrCreate('test', '42'), s.store.getOrCreate('test', '42')]);
    const c = await s.store.getOrCreate('test', '42');
    assert.equal(a, b);
    assert.equal(a, c);
    assert.equal(s.store.get('test:42'), a);
    assert.deepEqual(
      a.messages.map((m) => m.content),
      ['from disk', 'reply from disk'],
    );
    assert.equal(a.metadata.conversationId, 'conv_disk');
    assert.equal(a.createdAt, '2024-01-01T00:00:00.000Z');

    // Cached: a change on disk after the first load is not re-read.
    await writeFile(file, JSON.stringify({ ...onDisk, messages: [] }));
    assert.equal((await s.store.getOrCreate('test', '42')).messages.length, 2);

    // A chat with no file starts empty and writes nothing until saved.
    const fresh = await s.store.getOrCreate('test', 'new');
    assert.deepEqual(fresh.messages, []);
    assert.equal(fresh.id, 'test:new');
    await assert.rejects(stat(s.store.fileFor('test', 'new')), { code: 'ENOENT' });
  } finally {
    await s.cleanup();
  }
});

test('save writes the session so that it round-trips, in this store and a new one', async () => {
  const s = await openStore();
  try {
    const session = await s.store.getOrCreate('test', '7');
    session.metadata.messagesReceived = 1;
    await s.store.writer(session).append(makeMessage('user', 'héllo "quoted" \n newline 😀', { senderName: 'Ann', sourceId: '17' }));
    await s.store.writer(session).append(makeMessage('assistant', '', { toolCalls: [{ id: 'call_1', name: 'get_current_time', arguments: '{"tz":"UTC"}' }] }));
    await s.store.writer(session).append(makeMessage('tool', '12:00', { toolCallId: 'call_1', toolName: 'get_current_time' }));
    await s.store.flush();
    await s.store.save(session);

    const file = s.store.fileFor('test', '7');
    assert.deepEqual(await readJson(file), JSON.parse(JSON.stringify(session)));

    const reopened = new FileSessionStore(s.dir, s.logs.log);
    const loaded = await reopened.getOrCreate('test', '7');
    assert.notEqual(loaded, session);
    assert.deepEqual(loaded, JSON.parse(JSON.stringify(session)));
    // No temp files left next to it.
    assert.deepEqual(await readdir(s.dir), ['test:7.json']);
  } finally {
    await s.cleanup();
  }
});

test('a hostile chat id is stored directly inside sessions/ and nothing is created elsewhere', async () => {
  const s = await openStore();
  try {
    for (const chatId of ['../../etc/x', '../../../x', 'a/b', '..', '/abs']) {
      const session = await s.store.getOrCreate('console', chatId);
      await s.store.writer(session).append(makeMessage('user', `from ${chatId}`));
    }
    await s.store.flush();
    const names = (await readdir(s.dir)).sort();
    assert.equal(names.length, 5);
    assert.ok(names.includes('console:%2E%2E%2F%2E%2E%2Fetc%2Fx.json'), names.join(', '));
    for (const n of names) assert.ok(n.startsWith('console:') && n.endsWith('.json') && !n.slice(0, -5).includes('.'), n);
    // The only files anywhere under the temp root are those five (and the session log beside them).
    assert.deepEqual(await walk(s.root), [...names.map((n) => path.join('ws', 'sessions', n)), path.join('ws', 'sessions.wal.jsonl')].sort());
    // And each one holds its own chat.
    const back = await readJson(path.join(s.dir, 'console:%2E%2E%2F%2E%2E%2Fetc%2Fx.json'));
    assert.equal(back.chatId, '../../etc/x');
    assert.equal(back.messages[0].content, 'from ../../etc/x');
  } finally {
    await s.cleanup();
  }
});

for (const [label, content] of [
  ['not JSON', 'not json{'],
  ['JSON whose messages is not a list', JSON.stringify({ id: 'test:9', messages: 'nope', metadata: {} })],
  ['JSON with a malformed message', JSON.stringify({ messages: [{ role: 'wizard', content: 1 }] })],
  ['a JSON array', '[]'],
] as const) {
  test(`a corrupt session file (${label}) is set aside, logged at error level, and a fresh session starts`, async () => {
    const s = await openStore();
    try {
      const file = s.store.fileFor('test', '9');
      await writeFile(file, content);

      const session = await s.store.getOrCreate('test', '9');
      assert.deepEqual(session.messages, []);
      assert.equal(session.id, 'test:9');
      assert.equal(session.state, 'ACTIVE');

      const names = await readdir(s.dir);
      const aside = names.filter((n) => /^test:9\.json\.corrupt-\d+$/.test(n));
      assert.equal(aside.length, 1, `renamed aside: ${names.join(', ')}`);
      assert.equal(await readFile(path.join(s.dir, aside[0]!), 'utf8'), content, 'the bad content is kept for inspection');
      assert.ok(!names.includes('test:9.json'), 'the bad file is no longer in place');

      const errors = s.logs.lines().filter((l) => l.code === 'session.corrupt');
      assert.equal(errors.length, 1);
      assert.equal(errors[0]!.level, 50, 'error level');
      assert.equal(errors[0]!.file, 'test:9.json');

      // The fresh session saves normally next to the set-aside file.
      await s.store.writer(session).append(makeMessage('user', 'start over'));
      await s.store.flush();
      assert.equal((await readJson(file)).messages[0].content, 'start over');
      assert.equal((await readdir(s.dir)).filter((n) => n.includes('.corrupt-')).length, 1);
    } finally {
      await s.cleanup();
    }
  });
}

test('clear (/new) empties the conversation, starts a new conversation id and keeps the file', async () => {
  const s = await openStore();
  try {
    const session = await s.store.getOrCreate('test', '3');
    session.metadata.messagesReceived = 2;
    await s.store.writer(session).append(makeMessage('user', 'one'));
    await s.store.writer(session).append(makeMessage('assistant', 'two'));
    const before = session.metadata.conversationId;
    assert.equal(s.store.get('test:3')?.messages.length, 2);

    await s.store.writer(session).clear();
    assert.equal(s.store.get('test:3')?.messages.length, 0);
    assert.notEqual(session.metadata.conversationId, before);
    assert.match(session.metadata.conversationId, /^conv_/);

    const file = await readJson(s.store.fileFor('test', '3'));
    assert.deepEqual(file.messages, []);
    assert.equal(file.metadata.conversationId, session.metadata.conversationId);
    assert.equal(file.metadata.messagesReceived, 2, 'the chat-lifetime counter survives /new');
    assert.equal(file.id, 'test:3');
  } finally {
    await s.cleanup();
  }
});

function conversation(n: number): SessionMessage[] {
  return Array.from({ length: n }, (_, i) => makeMessage(i % 2 === 0 ? 'user' : 'assistant', `msg ${i}`));
}

async function sessionWith(s: Awaited<ReturnType<typeof openStore>>, chatId: string, messages: SessionMessage[]): Promise<Session> {
  const session = await s.store.getOrCreate('test', chatId);
  session.messages = messages;
  await s.store.save(session);
  return session;
}

test('replace writes the new message list to the file at once', async () => {
  const s = await openStore();
  try {
    const original = conversation(10);
    const session = await sessionWith(s, 'c', [...original]);
    const summary = makeMessage('system', '[Conversation summary]\nThe user said hello ten times.');
    await s.store.writer(session).replace([summary, ...original.slice(6)]);
    assert.equal(session.messages.length, 5);
    const file = await readJson(s.store.fileFor('test', 'c'));
    assert.deepEqual(
      file.messages.map((m: SessionMessage) => m.content),
      session.messages.map((m) => m.content),
    );
  } finally {
    await s.cleanup();
  }
});

test('risk: replace drops what was written while its list was made — given the copy it worked from, a message added since stays, after the new list, in the file', async () => {
  const s = await openStore();
  try {
    const original = conversation(10);
    const session = await sessionWith(s, 'd', [...original]);
    const writes = s.store.writer(session);
    const copy = session.messages.slice();
    // Meanwhile (a /stop while the summary is written): one committed, one only recorded.
    const marker = makeMessage('assistant', '[stopped before answering]', { stopped: true });
    await writes.append(marker);
    const recorded = makeMessage('user', 'one more');
    writes.record(recorded);
    const summary = makeMessage('system', '[Conversation summary]\nThe user said hello ten times.');
    await writes.replace([summary, ...copy.slice(6)], undefined, copy);
    const want = [summary, ...original.slice(6), marker, recorded].map((m) => m.content);
    assert.deepEqual(
      session.messages.map((m) => m.content),
      want,
    );
    const file = await readJson(s.store.fileFor('test', 'd'));
    assert.deepEqual(
      file.messages.map((m: SessionMessage) => m.content),
      want,
    );
  } finally {
    await s.cleanup();
  }
});

test('risk: a recorded message a compaction dropped comes back with the next log line — replace leaves only kept messages owed, in their new form', async () => {
  const ws = await tempDir();
  try {
    const dir = path.join(ws.dir, 'sessions');
    const store = new FileSessionStore(dir, captureLog().log);
    await store.init();
    const session = await store.getOrCreate('test', 'r');
    const writes = store.writer(session);
    const dropped = makeMessage('user', 'dropped by the compaction');
    const kept = makeMessage('user', 'kept, and flagged');
    writes.record(dropped);
    writes.record(kept);
    const flagged = { ...kept, consolidated: true };
    // The file writes fail (a folder stands where the file goes): what the log carries is all
    // a restart has, as after a kill before the next checkpoint.
    const file = store.fileFor('test', 'r');
    await mkdir(file);
    await assert.rejects(writes.replace([flagged]));
    await writes.append(makeMessage('assistant', 'answer'));
    await store.close();
    await rm(file, { recursive: true });
    const reopened = new FileSessionStore(dir, captureLog().log);
    await reopened.init();
    const back = await reopened.getOrCreate('test', 'r');
    assert.deepEqual(
      back.messages.map((m) => [m.content, m.consolidated === true]),
      [
        ['kept, and flagged', true],
        ['answer', false],
      ],
    );
  } finally {
    await ws.cleanup();
  }
});

test('the tail kept by a compaction never starts with a tool result: the calling assistant is kept too', () => {
  const call = makeMessage('assistant', '', {
    toolCalls: [
      { id: 'call_a', name: 'get_current_time', arguments: '{}' },
      { id: 'call_b', name: 'get_current_time', arguments: '{"tz":"UTC"}' },
    ],
  });
  const resA = makeMessage('tool', '10:00', { toolCallId: 'call_a', toolName: 'get_current_time' });
  const resB = makeMessage('tool', '10:00 UTC', { toolCallId: 'call_b', toolName: 'get_current_time' });
  const final = makeMessage('assistant', 'It is ten.');
  const messages = [...conversation(4), makeMessage('user', 'what time is it?'), call, resA, resB, final];
  // keepLast 2 and 3 would cut between the assistant's call and its results.
  for (const keepLast of [2, 3]) {
    const tail = messages.slice(tailStart(messages, keepLast));
    assert.deepEqual(tail, [call, resA, resB, final], `keepLast ${keepLast}`);
    // What is left is still a valid list for the API: nothing for repair to change.
    assert.deepEqual(repairToolPairs(tail), tail);
  }
});

test('repairToolPairs drops orphan tool results and answers unanswered calls with a placeholder', () => {
  const user = makeMessage('user', 'hi');
  const orphanFirst = makeMessage('tool', 'orphan', { toolCallId: 'call_x', toolName: 't' });
  const call = makeMessage('assistant', '', {
    toolCalls: [
      { id: 'call_1', name: 'one', arguments: '{}' },
      { id: 'call_2', name: 'two', arguments: '{}' },
    ],
  });
  const res1 = makeMessage('tool', 'r1', { toolCallId: 'call_1', toolName: 'one' });
  const wrongId = makeMessage('tool', 'wrong', { toolCallId: 'call_zzz', toolName: 'one' });
  const dup1 = makeMessage('tool', 'r1 again', { toolCallId: 'call_1', toolName: 'one' });
  const next = makeMessage('user', 'and?');
  const late2 = makeMessage('tool', 'r2 too late', { toolCallId: 'call_2', toolName: 'two' });
  const trailingCall = makeMessage('assistant', '', { toolCalls: [{ id: 'call_3', name: 'three', arguments: '{}' }] });

  const out = repairToolPairs([orphanFirst, user, call, res1, wrongId, dup1, next, late2, trailingCall]);
  assert.deepEqual(
    out.map((m) => [m.role, m.role === 'tool' ? m.toolCallId : m.content]),
    [
      ['user', 'hi'],
      ['assistant', ''],
      ['tool', 'call_1'],
      ['tool', 'call_2'], // placeholder, before the next user message
      ['user', 'and?'],
      ['assistant', ''],
      ['tool', 'call_3'], // placeholder at the end
    ],
  );
  const placeholder = out[3]!;
  assert.equal(placeholder.toolName, 'two');
  assert.match(placeholder.content, /interrupted/);
  assert.equal(out[2], res1, 'the real result is kept as is');
  assert.equal(out[6]!.toolName, 'three');

  // A valid list comes back unchanged; the input is not modified.
  const valid = [user, call, res1, makeMessage('tool', 'r2', { toolCallId: 'call_2', toolName: 'two' }), next];
  const copy = JSON.parse(JSON.stringify(valid));
  assert.deepEqual(repairToolPairs(valid), valid);
  assert.deepEqual(JSON.parse(JSON.stringify(valid)), copy);
});

test('risk: memory grows with every chat ever seen — idle sessions past the cache size are dropped and come back whole; busy or unsaved ones stay', async () => {
  const ws = await tempDir();
  try {
    const dir = path.join(ws.dir, 'sessions');
    const busy = new Set<string>();
    const store = new FileSessionStore(dir, captureLog().log, { maxCached: 3, inUse: (id) => busy.has(id) });
    await store.init();
    busy.add('test:busy');
    const held = await store.getOrCreate('test', 'busy');
    const owed = await store.getOrCreate('test', 'owed');
    store.writer(owed).record(makeMessage('user', 'not yet logged'));
    for (let i = 0; i < 10; i++) {
      const s = await store.getOrCreate('test', `c${i}`);
      await store.writer(s).append(makeMessage('user', `hello from ${i}`));
    }
    await store.flush();
    await store.getOrCreate('test', 'c9'); // one more load trims after the writes settled
    assert.ok(store.cachedCount <= 4, `cached ${store.cachedCount}`);
    assert.equal(await store.getOrCreate('test', 'busy'), held, 'a chat with work in progress keeps its object');
    assert.equal(await store.getOrCreate('test', 'owed'), owed, 'a session with unsaved messages is never dropped');
    const back = await store.getOrCreate('test', 'c0');
    assert.deepEqual(
      back.messages.map((m) => m.content),
      ['hello from 0'],
      'a dropped session reloads from its file',
    );
    await store.close();
  } finally {
    await ws.cleanup();
  }
});

test('risk: a session file whose fields have the wrong types bricks its chat — repaired on load, logged, set aside only when unreadable', async () => {
  const s = await openStore();
  try {
    const file = s.store.fileFor('test', '11');
    const stored = {
      messages: [
        { id: 'm1', role: 'user', content: 'what time is it?', timestamp: '2026-01-01T10:00:00.000Z', sourceId: 17, senderName: { x: 1 } },
        {
          id: 'm2',
          role: 'assistant',
          content: null,
          timestamp: 5,
          toolCalls: [
            { id: 'c1', name: 'get_current_time', arguments: { timezone: 'UTC' } },
            { id: 2, name: null, arguments: null },
          ],
        },
        { id: 'm3', role: 'tool', content: '{"iso":"x"}', timestamp: '2026-01-01T10:00:01.000Z', toolCallId: 'c1', toolName: 'get_current_time' },
        { id: 'm4', role: 'tool', content: 'Error: no name', timestamp: '2026-01-01T10:00:01.000Z', toolCallId: 2, toolName: ['x'], consolidated: 'yes' },
        { id: 'm5', role: 'assistant', content: 'It is ten.', timestamp: '2026-01-01T10:00:02.000Z', toolCalls: 'none' },
      ],
      metadata: { conversationId: 'conv_1', messagesReceived: '3', messagesCompacted: 0, lastCompaction: 'yesterday' },
    };
    await writeFile(file, JSON.stringify(stored));
    const session = await s.store.getOrCreate('test', '11');
    assert.equal(session.messages.length, 5, 'nothing dropped');
    const [user, call, , tool2, answer] = session.messages as any[];
    assert.equal(user.sourceId, '17');
    assert.equal(user.senderName, undefined);
    assert.equal(call.content, '');
    assert.equal(typeof call.timestamp, 'string');
    assert.deepEqual(call.toolCalls[0], { id: 'c1', name: 'get_current_time', arguments: '{"timezone":"UTC"}' });
    assert.equal(call.toolCalls[1].id, '2');
    assert.equal(typeof call.toolCalls[1].name, 'string');
    assert.equal(call.toolCalls[1].arguments, '');
    assert.equal(tool2.toolCallId, '2', 'still answers its call');
    assert.equal(tool2.toolName, undefined);
    assert.equal(tool2.consolidated, undefined);
    assert.equal(answer.toolCalls, undefined);
    assert.equal(session.metadata.lastCompaction, undefined);
    // Every string field is a string: the request builder and the token counter accept it.
    for (const m of repairToolPairs(session.messages)) {
      assert.equal(typeof m.content, 'string');
      for (const c of m.toolCalls ?? []) for (const v of [c.id, c.name, c.arguments]) assert.equal(typeof v, 'string');
    }
    const warned = s.logs.lines().filter((l) => l.code === 'session.repaired');
    assert.equal(warned.length, 1, 'one warning says the file was repaired');
    assert.ok(!(await readdir(s.dir)).some((n) => n.includes('.corrupt-')), 'not set aside');

    // A message that cannot be read as one (content an object) sets the file aside as before.
    await writeFile(s.store.fileFor('test', '12'), JSON.stringify({ messages: [{ role: 'user', content: { text: 'hi' } }] }));
    assert.deepEqual((await s.store.getOrCreate('test', '12')).messages, []);
    assert.ok((await readdir(s.dir)).some((n) => n.startsWith('test:12.json.corrupt-')));
  } finally {
    await s.cleanup();
  }
});

test('risk: a checkpoint scheduled after a direct save orphans the one already waiting — it rewrites the file after close', async () => {
  const s = await openStore();
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const session = await s.store.getOrCreate('test', 'k');
    const w = s.store.writer(session);
    await w.append(makeMessage('user', 'one')); // a checkpoint waits
    await w.setModel('small-model'); // written now, while that checkpoint still waits
    await w.append(makeMessage('user', 'two')); // the waiting checkpoint covers this one too
    await s.store.close();
    const file = s.store.fileFor('test', 'k');
    assert.deepEqual(
      JSON.parse(await readFile(file, 'utf8')).messages.map((m: SessionMessage) => m.content),
      ['one', 'two'],
    );
    await rm(file);
    mock.timers.tick(10_000); // any checkpoint still scheduled runs now
    await s.store.flush();
    await assert.rejects(stat(file), { code: 'ENOENT' }, 'nothing is written after close');
  } finally {
    mock.timers.reset();
    await s.cleanup();
  }
});
