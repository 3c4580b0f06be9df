import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/index/db.js';
import { MemoryIndex } from '../../src/index/memory-index.js';
import { silentLogger } from '../../src/log.js';
import { tempDir } from '../helpers/workspace.js';

/** A memory.db as an older program left it: migrations up to `version`, one memory in it. */
function oldFile(file: string, version: number): void {
  const old = new Database(file);
  old.exec('CREATE TABLE IF NOT EXISTS memory_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
  for (const step of MIGRATIONS.slice(0, version)) {
    if (typeof step === 'string') old.exec(step);
    else step(old);
  }
  old.prepare("INSERT INTO memory_metadata (key, value) VALUES ('schema_version', ?)").run(String(version));
  old
    .prepare(`INSERT INTO memories (id, kind, content, session_id, event_time, created_at, scope, source_role, speaker, source_message_id, seq${version === 2 ? ', scope_tok' : ''})
      VALUES (?, 'episode', ?, 'conv1', 1700000000, 1700000000, ?, 'user', 'Ann', '7', 1${version === 2 ? ", 'sc00'" : ''})`)
    .run('ep_old', 'I adopted a kitten called Pepper', 'telegram:42');
  if (version === 3) {
    // v3 wrote the scoped words from JS; an older program did the same when it stored the row.
    old.prepare("INSERT INTO fts_scopes (scope) VALUES ('telegram:42')").run();
    const code = (old.prepare("SELECT code FROM fts_scopes WHERE scope = 'telegram:42'").get() as { code: number }).code;
    old.prepare('INSERT INTO memories_fts_scoped (rowid, words) SELECT rowid, ? FROM memories').run(
      'I adopted a kitten called Pepper'.toLowerCase().split(' ').map((w) => `z${code}x${w}`).join(' '),
    );
  }
  old.close();
}

for (const version of [1, 2, 3]) {
  test(`risk: a schema change loses an existing memory.db — a version-${version} file migrates in place and stays searchable`, async () => {
    const ws = await tempDir();
    try {
      const file = path.join(ws.dir, 'memory.db');
      oldFile(file, version);
      const index = new MemoryIndex(file, silentLogger());
      assert.ok(index.enabled, index.disabledReason ?? '');
      assert.equal(index.meta('schema_version'), String(SCHEMA_VERSION));
      // "adopt" finds "adopted": the migrated text is in the stemmed per-chat index.
      assert.deepEqual(index.search('adopt kitten', { scope: 'telegram:42' }).map((h) => h.id), ['ep_old']);
      assert.deepEqual(index.search('kitten Pepper', { scope: 'telegram:43' }), [], 'still scoped after the migration');
      // New memories land beside the migrated one and are found the same way.
      index.saveEpisode({ content: 'The kitten sleeps all day', role: 'user', sessionId: 'conv2', scope: 'telegram:42', eventTime: new Date() });
      assert.equal(index.search('kitten', { scope: 'telegram:42' }).length, 2);
      // The chat's speakers are known to search from the messages already there (v4).
      const speakers = index.database!.prepare('SELECT scope, speaker FROM scope_speakers').all();
      assert.deepEqual(speakers, [{ scope: 'telegram:42', speaker: 'Ann' }]);
      index.close();
    } finally {
      await ws.cleanup();
    }
  });
}
