/**
 * SqliteUsageStore: the UsageStore contract (usage.contract.ts), then what is particular to
 * keeping the counts in usage.db — purge and the report open it only when it is there.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { silentLogger } from '../../../src/core/log.js';
import { SqliteUsageStore } from '../../../src/features/usage/sqlite-usage.js';
import { fileHarness } from '../../helpers/stores.js';
import { tempDir } from '../../helpers/workspace.js';
import { usageStoreContract } from './usage.contract.js';

describe('SqliteUsageStore meets the UsageStore contract', () =>
  usageStoreContract((timezone) =>
    fileHarness(
      async (dir) => SqliteUsageStore.inWorkspace(dir, timezone, { log: silentLogger() }),
      async (store) => store.close(),
    ),
  ));

test('a workspace without usage.db: existing() opens nothing and makes no file, read-only or not', async () => {
  const ws = await tempDir();
  try {
    assert.equal(SqliteUsageStore.existing(ws.dir, 'UTC', { readonly: true }), undefined);
    assert.equal(SqliteUsageStore.existing(ws.dir, 'UTC'), undefined);
    assert.equal(existsSync(path.join(ws.dir, 'usage.db')), false);
    await SqliteUsageStore.inWorkspace(ws.dir, 'UTC').close();
    const store = SqliteUsageStore.existing(ws.dir, 'UTC', { readonly: true });
    assert.ok(store);
    await store.close();
  } finally {
    await ws.cleanup();
  }
});
