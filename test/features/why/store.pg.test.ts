/**
 * The WhyStore contract (store.contract.ts) against PgWhyStore on a throwaway cluster, and the
 * move files → PostgreSQL → files giving the same records and the same bytes on disk.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { FileWhyStore } from '../../../src/features/why/store.js';
import { PgWhyStore } from '../../../src/features/why/store-pg.js';
import { collect } from '../../../src/storage/portable.js';
import { startPg, type PgCluster } from '../../helpers/pg.js';
import { pgHarness } from '../../helpers/pg-stores.js';
import { tempDir } from '../../helpers/workspace.js';
import { whyStoreContract, record } from './store.contract.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

const pg = () => pgHarness(cluster, async (db) => new PgWhyStore(db));

describe('PgWhyStore meets the WhyStore contract', () => whyStoreContract(pg, pg));

test('files → PostgreSQL → files: the same records, the same bytes on disk', async () => {
  const a = await tempDir();
  const b = await tempDir();
  const h = await pg();
  try {
    const from = new FileWhyStore(a.dir);
    await from.add(record('test:1', 'a1'));
    await from.add(record('telegram:5', 'b1', { sent: ['7', '8'] }));
    await from.add(record('test:1', 'a2'));
    await h.store.load(from.dump());
    const back = new FileWhyStore(b.dir);
    await back.load(h.store.dump());
    assert.deepEqual(await collect(back.dump()), await collect(from.dump()));
    const names = (await readdir(a.dir)).sort();
    assert.deepEqual((await readdir(b.dir)).sort(), names);
    for (const n of names) assert.equal(await readFile(path.join(b.dir, n), 'utf8'), await readFile(path.join(a.dir, n), 'utf8'), n);
  } finally {
    await h.cleanup();
    await a.cleanup();
    await b.cleanup();
  }
});
