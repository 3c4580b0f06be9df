/**
 * In PostgreSQL mode a memory tool says "saved" only once the fact is in the database: the index
 * writes its local cache at once and the database behind it (src/index/pg/), so a reply sent
 * before that write would promise what a process's death could still lose.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../../src/core/log.js';
import { PgMemoryIndex } from '../../../src/index/pg/pg-memory-index.js';
import { FileMemoryService } from '../../../src/memory/file-memory.js';
import { createMemoryIndexTools } from '../../../src/features/memory-access/memory-index.js';
import { Database } from '../../../src/storage/pg/database.js';
import type { ToolContext } from '../../../src/tools/types.js';
import { createRememberRequestSystem, NOT_SAVED } from '../../../src/features/memory-access/remember-request.js';
import { TurnWrites } from '../../../src/features/memory-access/turn-writes.js';
import { FileRuntimeConfigStore } from '../../../src/config/runtime.js';
import { createTurn } from '../../../src/turn/turn.js';
import { makeMessage, newSession } from '../../../src/sessions/model.js';
import { textReply } from '../../../src/core/channel.js';
import { unsavedWriter } from '../../helpers/app.js';
import { startPg, type PgCluster } from '../../helpers/pg.js';
import { migratedDatabase } from '../../helpers/pg-stores.js';
import { tempDir } from '../../helpers/workspace.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

const ctx: ToolContext = {
  chat: { channel: 'test', chatId: '1', group: false, manages: true },
  conversationId: 'conv-1',
  log: silentLogger(),
  signal: new AbortController().signal,
};

test('remember_fact, correct_fact, confirm_fact answer once the change is in PostgreSQL — a process killed right after its "Saved" loses nothing', async () => {
  const url = await migratedDatabase(cluster);
  const ws = await tempDir('membot-persisted-');
  const db = new Database({ url, poolSize: 2, log: silentLogger(), waitMs: 1_000 });
  const index = await PgMemoryIndex.open({ db, log: silentLogger() });
  const tools = createMemoryIndexTools(index, new FileMemoryService(ws.dir, 'chat'));
  const tool = (name: string) => tools.find((t) => t.name === name)!;
  const inDatabase = async (content: string) =>
    (await db.query<{ live: boolean }>('SELECT valid_until IS NULL AS live FROM memory_rows WHERE content = $1', [content])).rows[0]?.live;
  try {
    const saved = await tool('remember_fact').execute({ fact: 'Marta keeps her bees in Porto' }, ctx);
    const id = /^Saved as (fact_[0-9a-f]+)\.$/.exec(saved)?.[1];
    assert.ok(id, saved);
    assert.equal(await inDatabase('Marta keeps her bees in Porto'), true, 'in the database when the tool says "Saved"');

    const corrected = await tool('correct_fact').execute({ id, new_content: 'Marta keeps her bees in Braga' }, ctx);
    assert.match(corrected, /^Corrected: fact_\w+ retired, fact_\w+ saved\.$/);
    assert.equal(await inDatabase('Marta keeps her bees in Braga'), true);
    assert.equal(await inDatabase('Marta keeps her bees in Porto'), false, 'the retirement is written too');

    // The database stops: the fact is kept in the cache, and the model is told it is not written yet.
    cluster.halt();
    const held = await tool('remember_fact').execute({ fact: 'The hives face south' }, ctx);
    assert.match(held, /^Saved as fact_\w+\. Not written to the database yet \(it is not answering\): kept here and written when it answers\.$/);
    cluster.resume();
    await index.settle();
    assert.equal(await inDatabase('The hives face south'), true, 'written once the database is back');
  } finally {
    await index.shutdown();
    await db.close();
    await ws.cleanup();
  }
});

test('a "remember that…" the model saved nothing for: the reply says so while the database does not answer, and the fact reaches it when it does', async () => {
  const url = await migratedDatabase(cluster);
  const ws = await tempDir('membot-persisted-');
  const db = new Database({ url, poolSize: 2, log: silentLogger(), waitMs: 1_000 });
  const index = await PgMemoryIndex.open({ db, log: silentLogger() });
  const system = createRememberRequestSystem({
    index,
    memory: new FileMemoryService(ws.dir, 'chat'),
    runtime: new FileRuntimeConfigStore(ws.dir),
    writes: new TurnWrites(),
  });
  // A turn as ToolLoop (30) leaves it: the user's request, the model's "Noted!", no tool called.
  const turnFor = (words: string) => {
    const session = newSession('test', '1');
    const userMessage = makeMessage('user', words);
    session.messages.push(userMessage);
    const turn = createTurn({
      inbound: { channel: 'test', chatId: '1', userId: 'u1', text: words, receivedAt: new Date() },
      writes: unsavedWriter(session),
      log: silentLogger(),
      userMessage,
      reply: textReply(async () => undefined),
    });
    turn.response = 'Noted!';
    turn.answer = makeMessage('assistant', 'Noted!');
    return turn;
  };
  const inDatabase = async (content: string) => (await db.query('SELECT 1 FROM memory_rows WHERE content = $1', [content])).rowCount === 1;
  try {
    const kept = turnFor('Remember that the bees swarm in May.');
    await system.run(kept);
    assert.deepEqual(kept.notices, [], 'in the database before the reply: nothing to add');
    assert.equal(await inDatabase('The bees swarm in May.'), true);

    cluster.halt();
    const held = turnFor('Remember that the hives face south.');
    await system.run(held);
    assert.deepEqual(held.notices, [NOT_SAVED.database], 'the reply does not claim what only this process holds');
    cluster.resume();
    await index.settle();
    assert.equal(await inDatabase('The hives face south.'), true, 'written once the database is back');
  } finally {
    await index.shutdown();
    await db.close();
    await ws.cleanup();
  }
});
