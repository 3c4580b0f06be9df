/**
 * memory.db as a file: the seed's schema, schema versioning across restarts, and what happens
 * when the file is from a newer program or locked — the index turns itself off with one warning
 * and chat goes on — and damaged (set aside, an empty one started).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteMemoryIndex, sqliteFailure } from '../../../src/index/sqlite-memory-index.js';
import { SCHEMA_VERSION } from '../../../src/index/store/migrations.js';
import { startTestBot } from '../../helpers/app.js';
import { echoResponder, type Responder } from '../../helpers/fake-llm.js';
import { captureLog, tempDir, type CapturedLog } from '../../helpers/workspace.js';

const SEED_TABLES = ['memories', 'entities', 'memory_entities', 'memories_fts', 'sessions_consolidations', 'memory_metadata'];

function tables(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name);
  } finally {
    db.close();
  }
}

function warnings(logs: CapturedLog): Array<Record<string, any>> {
  return logs.lines().filter((l) => l.level === 40);
}

function episode(i: number) {
  return {
    content: `Message number ${i} about the garden`,
    role: 'user' as const,
    speaker: 'Ann',
    sessionId: 's1',
    scope: 'test:1',
    eventTime: new Date(),
    sourceMessageId: `m${i}`,
  };
}

/** Answers embeddings requests with a fixed-size vector, chat with the echo. */
function embeddingResponder(dims: number): Responder {
  return (req, i) => {
    if (req.path.endsWith('/embeddings')) {
      const inputs: string[] = Array.isArray(req.body.input) ? req.body.input : [req.body.input];
      return {
        json: {
          object: 'list',
          data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: Array.from({ length: dims }, (_v, d) => (d === index % dims ? 1 : 0.1)) })),
          model: 'm',
          usage: { prompt_tokens: 1, total_tokens: 1 },
        },
      };
    }
    return echoResponder(req, i);
  };
}

test('a new memory.db has the seed tables and records its schema version', async () => {
  const ws = await tempDir();
  try {
    const file = path.join(ws.dir, 'memory.db');
    const index = new SqliteMemoryIndex(file, captureLog().log);
    assert.equal(index.enabled, true);
    index.close();
    const names = tables(file);
    for (const t of SEED_TABLES) assert.ok(names.includes(t), `table ${t} missing (have ${names.join(', ')})`);
    const db = new Database(file, { readonly: true });
    try {
      const v = db.prepare("SELECT value FROM memory_metadata WHERE key = 'schema_version'").get() as { value: string } | undefined;
      assert.equal(v?.value, String(SCHEMA_VERSION));
      assert.equal((db.pragma('journal_mode', { simple: true }) as string).toLowerCase(), 'wal');
    } finally {
      db.close();
    }
  } finally {
    await ws.cleanup();
  }
});

test('with embeddings on, vec_memories exists, is locked to the dimensions, and gets vectors for messages', async () => {
  const bot = await startTestBot({ responder: embeddingResponder(8), env: { EMBEDDINGS_MODEL: 'text-embedding-3-small', EMBEDDINGS_DIMENSIONS: '8' } });
  const file = path.join(bot.workspace, 'memory.db');
  try {
    assert.deepEqual(await bot.send('1', 'I planted tomatoes in the garden'), ['echo: I planted tomatoes in the garden']);
  } finally {
    await bot.app.stop();
  }
  try {
    const db = new Database(file);
    try {
      const sqliteVec = (await import('sqlite-vec')) as unknown as { load: (d: Database.Database) => void };
      sqliteVec.load(db);
      assert.ok(tables(file).includes('vec_memories'));
      assert.equal((db.prepare("SELECT value FROM memory_metadata WHERE key = 'embedding_dimensions'").get() as { value: string }).value, '8');
      const n = (db.prepare('SELECT COUNT(*) AS n FROM vec_memories').get() as { n: number }).n;
      assert.equal(n, 2, 'the user message and the reply were embedded');
    } finally {
      db.close();
    }
    assert.ok(bot.llm.requests.some((r) => r.path.endsWith('/embeddings') && r.body.dimensions === 8));
  } finally {
    await bot.llm.close();
    const { rm } = await import('node:fs/promises');
    await rm(bot.workspace, { recursive: true, force: true });
  }
});

test('a changed EMBEDDINGS_DIMENSIONS turns vector search off with a warning saying how to rebuild; chat goes on', async () => {
  const ws = await tempDir();
  try {
    const first = await startTestBot({
      responder: embeddingResponder(8),
      env: { WORKSPACE_DIR: ws.dir, EMBEDDINGS_MODEL: 'text-embedding-3-small', EMBEDDINGS_DIMENSIONS: '8' },
    });
    await first.send('1', 'hello');
    await first.close();
    const second = await startTestBot({
      responder: embeddingResponder(16),
      env: { WORKSPACE_DIR: ws.dir, EMBEDDINGS_MODEL: 'text-embedding-3-small', EMBEDDINGS_DIMENSIONS: '16' },
    });
    try {
      const warn = warnings(second.logs).filter((l) => /dimension/i.test(l.msg));
      assert.equal(warn.length, 1, JSON.stringify(warnings(second.logs)));
      assert.match(warn[0]!.msg, /reindex/);
      assert.equal(second.app.parts.index.vectorsOn, false);
      assert.deepEqual(await second.send('1', 'still there?'), ['echo: still there?']);
    } finally {
      await second.close();
    }
  } finally {
    await ws.cleanup();
  }
});

test('opening an existing file again keeps every row and does not run the migrations again', async () => {
  const ws = await tempDir();
  try {
    const file = path.join(ws.dir, 'memory.db');
    const a = new SqliteMemoryIndex(file, captureLog().log);
    for (let i = 0; i < 3; i++) assert.ok(a.saveEpisode(episode(i)));
    a.close();
    // A sentinel: drop something the first migration creates. Re-running it would bring it back.
    const raw = new Database(file);
    raw.exec('DROP INDEX idx_mem_scope_time');
    raw.close();

    const b = new SqliteMemoryIndex(file, captureLog().log);
    assert.equal(b.enabled, true);
    assert.equal(b.meta('schema_version'), String(SCHEMA_VERSION));
    const db = b.database!;
    assert.equal((db.prepare("SELECT COUNT(*) AS n FROM memories WHERE kind = 'episode'").get() as { n: number }).n, 3);
    assert.equal(
      (db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'index' AND name = 'idx_mem_scope_time'").get() as { n: number }).n,
      0,
      'the migration ran again',
    );
    // Still searchable after the restart, and new rows go on next to the old ones.
    assert.equal(b.search('garden', { scope: 'test:1' }).length, 3);
    assert.ok(b.saveEpisode(episode(3)));
    assert.equal((db.prepare('SELECT COUNT(*) AS n FROM memories').get() as { n: number }).n, 4);
    b.close();
  } finally {
    await ws.cleanup();
  }
});

test('a file from a newer program (higher schema_version) disables the index with a clear reason, no throw', async () => {
  const ws = await tempDir();
  try {
    const file = path.join(ws.dir, 'memory.db');
    const a = new SqliteMemoryIndex(file, captureLog().log);
    a.saveEpisode(episode(1));
    a.setMeta('schema_version', String(SCHEMA_VERSION + 5));
    a.close();

    const logs = captureLog();
    const index = new SqliteMemoryIndex(file, logs.log);
    assert.equal(index.enabled, false);
    assert.match(index.disabledReason ?? '', new RegExp(`schema version ${SCHEMA_VERSION + 5}`));
    assert.match(index.disabledReason ?? '', /newer/);
    assert.equal(warnings(logs).length, 1);
    // Every call is a harmless no-op.
    assert.deepEqual(index.search('garden', { scope: 'test:1' }), []);
    assert.equal(index.saveEpisode(episode(2)), null);
    assert.deepEqual(index.saveFacts([{ content: 'The user likes tea', scope: 'test:1' }]), []);
    index.close();
    // The newer file was not touched: its row and version are still there.
    const raw = new Database(file, { readonly: true });
    assert.equal((raw.prepare('SELECT COUNT(*) AS n FROM memories').get() as { n: number }).n, 1);
    assert.equal((raw.prepare("SELECT value FROM memory_metadata WHERE key = 'schema_version'").get() as { value: string }).value, String(SCHEMA_VERSION + 5));
    raw.close();
  } finally {
    await ws.cleanup();
  }
});

test('a corrupt memory.db: set aside as it was, an empty index started, the user still gets replies and is remembered', async () => {
  const ws = await tempDir();
  try {
    const garbage = randomBytes(16_384);
    await writeFile(path.join(ws.dir, 'memory.db'), garbage);
    const bot = await startTestBot({ env: { WORKSPACE_DIR: ws.dir } });
    try {
      assert.equal(bot.app.parts.index.enabled, true, 'not switched off: one policy for a damaged file (storage/sqlite.ts)');
      assert.ok((bot.app.parts.index as SqliteMemoryIndex).setAside, 'the facade knows where the damaged file went');
      for (let i = 1; i <= 3; i++) assert.deepEqual(await bot.send('1', `hello ${i}`), [`echo: hello ${i}`]);
      assert.equal(warnings(bot.logs).length, 0, 'no warning per message');
      const errors = bot.logs.lines().filter((l) => l.code === 'storage.corrupt');
      assert.equal(errors.length, 1);
      assert.match(errors[0]!.msg, /memory\.db is damaged: set it aside/);
      assert.ok(
        (await readFile((bot.app.parts.index as SqliteMemoryIndex).setAside!)).equals(garbage),
        'the damaged file is kept as it was (for the owner to inspect)',
      );
    } finally {
      await bot.close();
    }
  } finally {
    await ws.cleanup();
  }
});

test('a locked memory.db: writes fail softly with one warning, replies still go out, indexing resumes after the lock', async () => {
  const bot = await startTestBot();
  const file = path.join(bot.workspace, 'memory.db');
  const holder = new Database(file, { timeout: 0 });
  // The daemon's connection waits 2 s on a busy file before giving up, synchronously; with five
  // messages of two writes each that alone would be 20 s. What is tested here (one warning,
  // replies delivered, recovery) does not depend on how long it waits, so the wait is shortened.
  (bot.app.parts.index as SqliteMemoryIndex).database!.pragma('busy_timeout = 100');
  (bot.app.parts.index as SqliteMemoryIndex).pauseMs = 300;
  try {
    holder.exec('BEGIN EXCLUSIVE');
    for (let i = 1; i <= 5; i++) assert.deepEqual(await bot.send('1', `locked message ${i}`), [`echo: locked message ${i}`]);
    const w = warnings(bot.logs);
    assert.equal(w.length, 1, `one warning, not a flood: ${JSON.stringify(w.map((l) => l.msg))}`);
    assert.match(w[0]!.msg, /\[Index\].*locked/);
    holder.exec('ROLLBACK');
    // The index rests a while after seeing the lock (30 s by default), then indexes again,
    // including the messages that arrived while it was locked.
    await new Promise((r) => setTimeout(r, (bot.app.parts.index as SqliteMemoryIndex).pauseMs + 20));

    assert.deepEqual(await bot.send('1', 'unlocked message about zucchini'), ['echo: unlocked message about zucchini']);
    const rows = holder.prepare("SELECT content, source_role FROM memories WHERE kind = 'episode' ORDER BY seq").all() as Array<{
      content: string;
      source_role: string;
    }>;
    const contents = rows.map((r) => r.content);
    for (let i = 1; i <= 5; i++) assert.ok(contents.includes(`locked message ${i}`), `locked message ${i} indexed after the lock`);
    assert.ok(contents.includes('unlocked message about zucchini'));
    assert.ok(bot.app.parts.index.search('zucchini', { scope: 'test:1' }).length > 0);
  } finally {
    holder.close();
    await bot.close();
  }
});

test('risk: the guard hides bugs — a TypeError inside a guarded call surfaces, and is not logged as an outage', () => {
  const logs = captureLog();
  const index = new SqliteMemoryIndex(':memory:', logs.log);
  try {
    assert.ok(index.saveEpisode(episode(1)));
    // A caller bug (no text): before, this became an empty result and a warning about the index.
    assert.throws(() => index.search(undefined as unknown as string, { scope: 'test:1' }), TypeError);
    assert.throws(() => index.saveFacts([{ content: undefined as unknown as string, scope: 'test:1' }]), TypeError);
    assert.equal(warnings(logs).length, 0, 'no "search failed; continuing without it" for a bug');
    // The index is not left in an outage: the next calls work and find what is there.
    assert.equal(index.search('garden', { scope: 'test:1' }).length, 1);
  } finally {
    index.close();
  }
});

test("the guard absorbs SQLite's own failures (locked, corrupt, full, I/O) and nothing else", () => {
  const sqlite = (code: string) => Object.assign(new Error(code), { code });
  for (const code of [
    'SQLITE_BUSY',
    'SQLITE_BUSY_SNAPSHOT',
    'SQLITE_LOCKED',
    'SQLITE_CORRUPT',
    'SQLITE_CORRUPT_VTAB',
    'SQLITE_NOTADB',
    'SQLITE_FULL',
    'SQLITE_IOERR_WRITE',
    'SQLITE_READONLY',
  ]) {
    assert.equal(sqliteFailure(sqlite(code)), code);
  }
  for (const err of [
    new TypeError('x is undefined'),
    sqlite('SQLITE_CONSTRAINT_PRIMARYKEY'),
    sqlite('SQLITE_ERROR'),
    sqlite('SQLITE_BUSYNESS'),
    new Error('plain'),
    null,
    'text',
  ]) {
    assert.equal(sqliteFailure(err), undefined, String(err));
  }
});
