/**
 * ChatNames in PostgreSQL: the ChatNames contract (names.contract.ts) against PgChatNames on a
 * throwaway cluster, then what two processes and purge need of it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PgChatNames } from '../../src/sessions/names-pg.js';
import { silentLogger } from '../../src/core/log.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { pgHarness } from '../helpers/pg-stores.js';
import { chatNamesContract } from './names.contract.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

const harness = () =>
  pgHarness(
    cluster,
    async (db) => {
      const names = new PgChatNames(db, silentLogger());
      await names.load();
      return names;
    },
    (names) => names.flush(),
  );

describe('PgChatNames meets the ChatNames contract', () => chatNamesContract(harness));

test('two processes note one chat: a name one stored is not erased by the other, which never saw it', async () => {
  const h = await harness();
  try {
    const other = await h.reopen();
    h.store.note('telegram', '-100:7', { kind: 'topic', name: 'Honey sales', group: { chatId: '-100', name: 'Beekeepers' } });
    await h.store.flush();
    // The other process did not read the name: Telegram sends a topic's name only with some messages.
    other.note('telegram', '-100:7', { kind: 'topic', group: { chatId: '-100' } });
    await other.flush();
    const next = await h.reopen();
    assert.deepEqual(next.get('telegram:-100:7'), { kind: 'topic', name: 'Honey sales', parent: 'telegram:-100' });
    assert.deepEqual(next.get('telegram:-100'), { kind: 'group', name: 'Beekeepers' });
  } finally {
    await h.cleanup();
  }
});
