/**
 * SqliteReminderStore: the ReminderStore contract (store.contract.ts), then what is particular to
 * keeping reminders in schedules.db — purge opens it only when it is there.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { silentLogger } from '../../../src/core/log.js';
import { SqliteReminderStore } from '../../../src/features/reminders/sqlite-store.js';
import { fileHarness } from '../../helpers/stores.js';
import { tempDir } from '../../helpers/workspace.js';
import { reminderStoreContract } from './store.contract.js';

describe('SqliteReminderStore meets the ReminderStore contract', () =>
  reminderStoreContract(() =>
    fileHarness(
      async (dir) => SqliteReminderStore.inWorkspace(dir, silentLogger()),
      async (store) => store.close(),
    ),
  ));

test('a workspace without schedules.db: existing() opens nothing and makes no file; inWorkspace makes it', async () => {
  const ws = await tempDir();
  try {
    assert.equal(SqliteReminderStore.existing(ws.dir, silentLogger()), undefined);
    assert.equal(existsSync(path.join(ws.dir, 'schedules.db')), false);
    await SqliteReminderStore.inWorkspace(ws.dir, silentLogger()).close();
    const store = SqliteReminderStore.existing(ws.dir, silentLogger());
    assert.ok(store);
    await store.close();
  } finally {
    await ws.cleanup();
  }
});
