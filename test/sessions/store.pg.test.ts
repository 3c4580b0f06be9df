/**
 * PgSessionStore: the SessionStore contract (store.contract.ts) on a throwaway cluster, then what
 * is particular to keeping sessions in PostgreSQL — a move from files and back, byte for byte.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { PgSessionStore } from '../../src/sessions/pg-store.js';
import { FileSessionStore } from '../../src/sessions/file-store.js';
import { makeMessage } from '../../src/sessions/model.js';
import { collect } from '../../src/storage/portable.js';
import { captureLog, tempDir } from '../helpers/workspace.js';
import { PgChatNames } from '../../src/sessions/names-pg.js';
import { silentLogger } from '../../src/core/log.js';
import type { Database } from '../../src/storage/pg/database.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { migratedDatabase, pgHarness, testDatabase } from '../helpers/pg-stores.js';
import { handMade, sessionStoreContract, sorted } from './store.contract.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

export async function openPgSessions(db: Database): Promise<PgSessionStore> {
  const store = new PgSessionStore(db, new PgChatNames(db, silentLogger()), silentLogger());
  await store.init();
  return store;
}

const harness = () => pgHarness(cluster, openPgSessions, (store) => store.close());

describe('PgSessionStore meets the SessionStore contract', () => sessionStoreContract(harness));

/** Every file of a workspace's sessions (the folder and the log beside it), name → bytes. */
async function sessionBytes(ws: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const name of await readdir(path.join(ws, 'sessions'))) out.set(name, (await readFile(path.join(ws, 'sessions', name))).toString('hex'));
  out.set('sessions.wal.jsonl', (await readFile(path.join(ws, 'sessions.wal.jsonl'))).toString('hex'));
  return out;
}

async function fileStore(ws: string): Promise<FileSessionStore> {
  const store = new FileSessionStore(path.join(ws, 'sessions'), silentLogger());
  await store.init();
  return store;
}

test('files → PostgreSQL → files gives the same items and the same session files byte for byte, a copy set aside and the log included', async () => {
  const h = await harness();
  const [from, to] = [await tempDir(), await tempDir()];
  try {
    // What an older version or a hand wrote, and a copy set aside: moved as they are.
    await new FileSessionStore(path.join(from.dir, 'sessions'), silentLogger()).load(
      (async function* () {
        yield* handMade;
      })(),
    );
    const files = await fileStore(from.dir);
    for (const chatId of ['1', '-100123:7', 'ünï 🐝']) {
      const w = files.writer(await files.getOrCreate('telegram', chatId));
      await w.append(makeMessage('user', `hello from ${chatId}`, { senderName: 'Ann' }));
      await w.append(makeMessage('assistant', 'hi'));
    }
    await files.writer(await files.getOrCreate('telegram', '1')).setModel('small-model');
    await files.close();
    const before = await sessionBytes(from.dir);
    const items = await collect(files.dump());
    assert.deepEqual(items.map((i) => i.kind).sort(), ['damaged', ...Array<string>(7).fill('log'), ...Array<string>(4).fill('session')]);

    assert.equal(await h.store.isEmpty(), true);
    await h.store.load(
      (async function* () {
        yield* items;
      })(),
    );
    assert.deepEqual(sorted(await collect(h.store.dump())), sorted(items));

    const back = new FileSessionStore(path.join(to.dir, 'sessions'), silentLogger());
    assert.equal(await back.isEmpty(), true);
    await back.load(h.store.dump());
    assert.deepEqual(await sessionBytes(to.dir), before);
    assert.deepEqual(sorted(await collect(back.dump())), sorted(items));
  } finally {
    await h.cleanup();
    await from.cleanup();
    await to.cleanup();
  }
});

test('a session changed after a move is written as the file store writes it: a move back gives the file the file store would have written', async () => {
  const h = await harness();
  const ws = await tempDir();
  try {
    await h.store.load(
      (async function* () {
        yield* handMade;
      })(),
    );
    const s = await h.store.getOrCreate('telegram', '-100:7');
    await h.store.writer(s).append(makeMessage('assistant', 'answered in PostgreSQL'));
    const back = await fileStore(ws.dir);
    await back.load(h.store.dump());
    const text = await readFile(back.fileFor('telegram', '-100:7'), 'utf8');
    assert.equal(text, JSON.stringify(s, null, 1));
  } finally {
    await h.cleanup();
    await ws.cleanup();
  }
});

test('a moved session that cannot be read is set aside, logged at error level, and a fresh session starts — its text kept for inspection', async () => {
  const logs = captureLog();
  const h = await pgHarness(cluster, async (db) => {
    const store = new PgSessionStore(db, new PgChatNames(db, silentLogger()), logs.log);
    await store.init();
    return store;
  });
  try {
    await h.store.load(
      (async function* () {
        yield { kind: 'session' as const, channel: 'test', chatId: '9', text: 'not json{' };
      })(),
    );
    const s = await h.store.getOrCreate('test', '9');
    assert.deepEqual(s.messages, []);
    const errors = logs.lines().filter((l) => l.code === 'session.corrupt');
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.level, 50);
    await h.store.writer(s).append(makeMessage('user', 'start over'));
    const items = await collect(h.store.dump());
    assert.deepEqual(
      items.filter((i) => i.kind !== 'log').map((i) => [i.kind, i.text.slice(0, 9)]),
      [
        ['session', '{\n "id": '],
        ['damaged', 'not json{'],
      ],
    );
    assert.deepEqual(
      (await h.store.traces()).map((c) => c.chatId),
      ['9'],
    );
    const words = { test: (t: string) => t.includes('json'), redact: (t: string) => t.replaceAll('json', '****') };
    assert.ok((await h.store.redact('test', '9', words)).some((l) => l.includes('set aside')));
    assert.ok(!JSON.stringify(await collect(h.store.dump())).includes('not json'));
  } finally {
    await h.cleanup();
  }
});

test('risk: a turn rewrites the whole session — appending to a long session inserts its new rows and leaves the earlier ones untouched', async () => {
  const db = testDatabase(await migratedDatabase(cluster));
  try {
    const store = await openPgSessions(db);
    const s = await store.getOrCreate('test', 'long');
    const w = store.writer(s);
    for (let i = 0; i < 30; i++) await w.append(makeMessage(i % 2 ? 'assistant' : 'user', `message ${i}`));
    // A row's xmin names the transaction that last wrote it.
    const versions = async () =>
      (await db.query<{ v: string }>("SELECT pos || ':' || xmin AS v FROM session_messages WHERE chat = 'test:long' ORDER BY pos")).rows.map((r) => r.v);
    const earlier = await versions();
    await w.append(makeMessage('user', 'one more'));
    const now = await versions();
    assert.deepEqual(now.slice(0, 30), earlier, 'no earlier row was written again');
    assert.equal(now.length, 31);
    await store.close();
  } finally {
    await db.close();
  }
});

test('a session whose rows were broken by hand is set aside, and its chat starts afresh instead of failing every message', async () => {
  const db = testDatabase(await migratedDatabase(cluster));
  try {
    const store = await openPgSessions(db);
    await store.writer(await store.getOrCreate('test', 'b')).append(makeMessage('user', 'before the edit'));
    await store.close();
    await db.query("UPDATE session_messages SET body = 'not json{' WHERE chat = 'test:b'");
    const logs = captureLog();
    const next = new PgSessionStore(db, new PgChatNames(db, silentLogger()), logs.log);
    await next.init();
    assert.deepEqual((await next.getOrCreate('test', 'b')).messages, []);
    assert.equal(logs.lines().filter((l) => l.code === 'session.corrupt').length, 1);
    const aside = (await collect(next.dump())).filter((i) => i.kind === 'damaged');
    assert.equal(aside.length, 1);
    assert.ok(aside[0]!.text.includes('not json{'), 'what was there is kept for inspection');
  } finally {
    await db.close();
  }
});
