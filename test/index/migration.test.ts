import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/index/db.js';
import { MemoryIndex } from '../../src/index/memory-index.js';
import { silentLogger } from '../../src/log.js';
import { tempDir } from '../helpers/workspace.js';

test('risk: a schema change loses an existing memory.db — a version-1 file migrates in place and stays searchable', async () => {
  const ws = await tempDir();
  try {
    const file = path.join(ws.dir, 'memory.db');
    const old = new Database(file);
    old.exec('CREATE TABLE IF NOT EXISTS memory_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
    old.exec(MIGRATIONS[0]!);
    old.prepare("INSERT INTO memory_metadata (key, value) VALUES ('schema_version', '1')").run();
    old
      .prepare("INSERT INTO memories (id, kind, content, session_id, event_time, created_at, scope, source_role, source_message_id, seq) VALUES (?, 'episode', ?, 'conv1', 1700000000, 1700000000, ?, 'user', '7', 1)")
      .run('ep_old', 'I adopted a kitten called Pepper', 'telegram:42');
    old.close();

    const index = new MemoryIndex(file, silentLogger());
    assert.ok(index.enabled, index.disabledReason ?? '');
    assert.equal(index.meta('schema_version'), String(SCHEMA_VERSION));
    const hits = index.search('kitten Pepper', { scope: 'telegram:42' });
    assert.deepEqual(hits.map((h) => h.id), ['ep_old']);
    assert.deepEqual(index.search('kitten Pepper', { scope: 'telegram:43' }), [], 'still scoped after the migration');
    index.close();
  } finally {
    await ws.cleanup();
  }
});
