/**
 * The scrub after /forget (src/index/store/scrubber.ts) runs in a worker thread: the daemon must go on
 * answering other chats while memory.db is rewritten, keep the messages that arrive meanwhile,
 * and still leave no byte of the erased words in memory.db or its WAL.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { SqliteMemoryIndex } from '../../../src/index/sqlite-memory-index.js';
import { IndexingService } from '../../../src/index/ingest.js';
import { Upkeep } from '../../../src/index/upkeep/upkeep.js';
import { silentLogger } from '../../../src/core/log.js';
import { tempDir } from '../../helpers/workspace.js';

const WORDS = 'apple river garden window piano ocean forest kitten lemon sunset valley tiger meadow candle'.split(' ');

function fill(index: SqliteMemoryIndex, n: number): void {
  const ingest = new IndexingService(index);
  for (let i = 0; i < n; i++) {
    const text =
      Array.from({ length: 10 }, (_, j) => WORDS[(i * 5 + j * 3) % WORDS.length]).join(' ') + (i % 300 === 11 ? ' my locker code is Quokka7731' : '');
    ingest.ingestMessage({
      content: text,
      role: 'user',
      sessionId: `s${i % 3}`,
      scope: `telegram:${i % 3}`,
      eventTime: new Date(Date.UTC(2026, 0, 1) + i * 60_000),
    });
  }
}

function bytesHolding(file: string, needle: string): number {
  return existsSync(file) ? readFileSync(file).toString('latin1').toLowerCase().split(needle.toLowerCase()).length - 1 : 0;
}

test('the scrub after /forget runs off the event loop: other chats are searched meanwhile, their new messages are kept, and no erased byte is left', async () => {
  const ws = await tempDir('membot-scrub-');
  const file = path.join(ws.dir, 'memory.db');
  const index = new SqliteMemoryIndex(file, silentLogger());
  try {
    fill(index, 3_000);
    const erase = index.erase!;
    const rows = erase.matching('telegram:2', (t) => /quokka7731/i.test(t));
    assert.ok(rows.length >= 3, 'the secret was said several times in chat 2');
    erase.memoriesAndEntities(rows, 'telegram:2', (t) => /quokka7731/i.test(t));

    let done = false;
    const scrub = index.scrubFreedSpace().then(() => (done = true));
    // A scrub on the event loop would be over before the loop turns once.
    await new Promise((r) => setImmediate(r));
    assert.equal(done, false, 'the scrub is still running after the event loop turned');
    assert.ok(index.search('piano ocean', { scope: 'telegram:0', limit: 5 }).length > 0, 'another chat is searched during the scrub');
    assert.equal(
      index.saveEpisode({ content: 'we planted zucchini today', role: 'user', sessionId: 's0', scope: 'telegram:0', eventTime: new Date() }),
      null,
      'held, not written under the scrub',
    );
    await scrub;

    assert.equal(
      index.search('zucchini', { scope: 'telegram:0', limit: 5 })[0]?.content,
      'we planted zucchini today',
      'the message that arrived during the scrub was saved after it',
    );
    assert.equal(index.search('quokka7731', { scope: 'telegram:2', limit: 5 }).length, 0);
    assert.ok(index.search('lemon sunset', { scope: 'telegram:2', limit: 5 }).length > 0, 'the rest of chat 2 is still found');
    assert.equal(bytesHolding(file, 'quokka7731'), 0, 'no byte of the word in memory.db');
    assert.equal(bytesHolding(`${file}-wal`, 'quokka7731'), 0, 'nor in its WAL');
    assert.deepEqual(index.database!.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
  } finally {
    index.close();
    await ws.cleanup();
  }
});

test('the nightly jobs wait for a scrub to end instead of running into its lock', async () => {
  const ws = await tempDir('membot-scrub-');
  const index = new SqliteMemoryIndex(path.join(ws.dir, 'memory.db'), silentLogger());
  try {
    fill(index, 600);
    const order: string[] = [];
    const scrub = index.scrubFreedSpace().then(() => order.push('scrub'));
    const upkeep = new Upkeep(index, undefined as never, silentLogger());
    const job = upkeep.run('decay').then((r) => order.push(`decay ${r.detail.startsWith('failed') ? 'failed' : 'ok'}`));
    await Promise.all([scrub, job]);
    assert.deepEqual(order, ['scrub', 'decay ok']);
  } finally {
    index.close();
    await ws.cleanup();
  }
});
