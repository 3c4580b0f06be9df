import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, SCHEMA_VERSION } from '../../../src/index/store/migrations.js';
import { SqliteMemoryIndex } from '../../../src/index/sqlite-memory-index.js';
import { silentLogger } from '../../../src/core/log.js';
import { tempDir } from '../../helpers/workspace.js';

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
      'I adopted a kitten called Pepper'
        .toLowerCase()
        .split(' ')
        .map((w) => `z${code}x${w}`)
        .join(' '),
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
      const index = new SqliteMemoryIndex(file, silentLogger());
      assert.ok(index.enabled, index.disabledReason ?? '');
      assert.equal(index.meta('schema_version'), String(SCHEMA_VERSION));
      // "adopt" finds "adopted": the migrated text is in the stemmed per-chat index.
      assert.deepEqual(
        index.search('adopt kitten', { scope: 'telegram:42' }).map((h) => h.id),
        ['ep_old'],
      );
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

test('risk: entities leak across chats — a version-3 file with global entities migrates to per-chat entities, spellings and counts', async () => {
  const ws = await tempDir();
  try {
    const file = path.join(ws.dir, 'memory.db');
    // As the version-3 writer left it: one global entity for a link both chats named, spelled
    // A's way, with both spellings as aliases and one count over both chats.
    const old = new Database(file);
    old.exec('CREATE TABLE IF NOT EXISTS memory_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
    for (const step of MIGRATIONS.slice(0, 3)) {
      if (typeof step === 'string') old.exec(step);
      else step(old);
    }
    old.prepare("INSERT INTO memory_metadata (key, value) VALUES ('schema_version', '3')").run();
    const A = 'https://files.example/share/XyZ-Secret-Q7';
    const B = 'https://files.example/share/xyz-secret-q7';
    const mem = old.prepare(`INSERT INTO memories (id, kind, content, session_id, event_time, created_at, scope, source_role, seq, entity_ids)
      VALUES (?, 'episode', ?, ?, 1700000000, 1700000000, ?, 'user', ?, '["ent_old"]')`);
    mem.run('ep_a1', `the draft is at ${A}`, 'cA', 'telegram:1', 1);
    mem.run('ep_a2', `again ${A} please`, 'cA', 'telegram:1', 2);
    mem.run('ep_b1', `is ${B} up?`, 'cB', 'telegram:2', 1);
    old.prepare("INSERT INTO entities (id, canonical_name, type, aliases, mention_count) VALUES ('ent_old', ?, 'url', ?, 3)").run(A, JSON.stringify([A, B]));
    old.prepare("INSERT INTO entity_aliases (alias, entity_id) VALUES (?, 'ent_old')").run(B);
    const link = old.prepare("INSERT INTO memory_entities (memory_id, entity_id, scope) VALUES (?, 'ent_old', ?)");
    link.run('ep_a1', 'telegram:1');
    link.run('ep_a2', 'telegram:1');
    link.run('ep_b1', 'telegram:2');
    old.close();

    const index = new SqliteMemoryIndex(file, silentLogger());
    assert.ok(index.enabled, index.disabledReason ?? '');
    assert.equal(index.meta('schema_version'), String(SCHEMA_VERSION));
    const b = index.entityInfo(B, 'telegram:2')!;
    assert.deepEqual({ name: b.name, aliases: b.aliases, mentions: b.mentions }, { name: B, aliases: [B], mentions: 1 });
    assert.deepEqual(
      b.memories.map((m) => m.id),
      ['ep_b1'],
    );
    const a = index.entityInfo(B, 'telegram:1')!;
    assert.deepEqual({ name: a.name, aliases: a.aliases, mentions: a.mentions }, { name: A, aliases: [A], mentions: 2 });
    assert.notEqual(a.id, b.id, 'one entity per chat');
    // Linked memories name their chat's entity; new mentions count in their own chat only.
    const ids = index.database!.prepare("SELECT entity_ids FROM memories WHERE id = 'ep_b1'").get() as { entity_ids: string };
    assert.deepEqual(JSON.parse(ids.entity_ids), [b.id]);
    index.saveEpisode({ content: `still ${B}?`, role: 'user', sessionId: 'cB', scope: 'telegram:2', eventTime: new Date() });
    assert.equal(index.entityInfo(B, 'telegram:2')!.mentions, 2);
    assert.equal(index.entityInfo(B, 'telegram:1')!.mentions, 2);
    index.close();
  } finally {
    await ws.cleanup();
  }
});
