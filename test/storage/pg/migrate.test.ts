/**
 * Schema migrations (src/storage/pg/migrate.ts) on a real server: the project's own files
 * apply, several processes starting at once apply each file once, a file edited after it was
 * applied stops the start with one line, a refused file leaves nothing behind, and a database
 * newer than the program is accepted (migrations only add).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isAppError } from '../../../src/core/errors.js';
import { Database } from '../../../src/storage/pg/database.js';
import { MIGRATIONS_DIR, migrate, readMigrations } from '../../../src/storage/pg/migrate.js';
import { repoRoot } from '../../helpers/child.js';
import { startPg, type PgCluster } from '../../helpers/pg.js';
import { captureLog, tempDir } from '../../helpers/workspace.js';

let cluster: PgCluster;
let dirs: Awaited<ReturnType<typeof tempDir>>;
before(async () => {
  cluster = await startPg();
  dirs = await tempDir('membot-migrations-');
});
after(async () => {
  await cluster?.stop();
  await dirs?.cleanup();
});

let made = 0;
/** A folder of migration files: name → SQL. */
async function folder(files: Record<string, string>): Promise<string> {
  const dir = path.join(dirs.dir, `set${++made}`);
  await mkdir(dir);
  for (const [name, sql] of Object.entries(files)) await writeFile(path.join(dir, name), sql);
  return dir;
}

const FILES = {
  '001_notes.sql': 'CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL);\nCREATE TABLE applied_log (file text NOT NULL);\n',
  '002_tags.sql': "CREATE TABLE tags (note int REFERENCES notes, tag text);\nINSERT INTO applied_log VALUES ('002');\n",
  '003_index.sql': "CREATE INDEX tags_by_tag ON tags (tag);\nINSERT INTO applied_log VALUES ('003');\n",
};

const open = (url: string) => {
  const cap = captureLog();
  return { db: new Database({ url, poolSize: 2, log: cap.log }), cap };
};

test("the repository's migrations apply to an empty database, recorded with name and checksum; a second start applies nothing", async () => {
  const { db } = open(await cluster.createDatabase());
  try {
    const known = readMigrations().map((m) => m.name);
    assert.ok(known.length >= 1 && known[0]!.startsWith('001_'));
    assert.deepEqual((await migrate(db, { log: captureLog().log })).applied, known);
    const rows = (await db.query<{ version: number; name: string; checksum: string; applied_at: Date }>('SELECT * FROM schema_migrations ORDER BY version'))
      .rows;
    assert.deepEqual(
      rows.map((r) => r.name),
      known,
    );
    assert.ok(rows.every((r) => /^[0-9a-f]{64}$/.test(r.checksum) && r.applied_at instanceof Date));
    assert.deepEqual(await migrate(db, { log: captureLog().log }), { applied: [], newer: [] });
  } finally {
    await db.close();
  }
});

test('the migrations folder is found from the build as from the sources: migrations/pg at the root, as deep from dist/storage/pg as from src/storage/pg', () => {
  assert.equal(MIGRATIONS_DIR, path.join(repoRoot, 'migrations', 'pg'));
  const build = JSON.parse(readFileSync(path.join(repoRoot, 'tsconfig.build.json'), 'utf8')) as { compilerOptions: { rootDir: string; outDir: string } };
  // migrate.ts climbs three folders: true from dist/ only while dist/ mirrors src/ beside it.
  assert.deepEqual([build.compilerOptions.rootDir, build.compilerOptions.outDir], ['src', 'dist']);
});

test('risk: three processes starting at once apply a migration twice — under the advisory lock each file runs once', async () => {
  const url = await cluster.createDatabase();
  const dir = await folder(FILES);
  const three = [open(url), open(url), open(url)];
  try {
    const results = await Promise.all(three.map(({ db, cap }) => migrate(db, { log: cap.log, dir })));
    assert.deepEqual(results.flatMap((r) => r.applied).sort(), Object.keys(FILES), 'each file applied by one of them');
    const { db } = three[0]!;
    assert.deepEqual((await db.query('SELECT file FROM applied_log ORDER BY file')).rows, [{ file: '002' }, { file: '003' }]);
    assert.equal((await db.query('SELECT version FROM schema_migrations')).rowCount, 3);
  } finally {
    await Promise.all(three.map(({ db }) => db.close()));
  }
});

test('risk: a migration edited after it was applied would differ between databases — the start stops with one line naming the file, and applies nothing more', async () => {
  const url = await cluster.createDatabase();
  const { db, cap } = open(url);
  try {
    const dir = await folder({ '001_notes.sql': FILES['001_notes.sql'], '002_tags.sql': FILES['002_tags.sql'] });
    await migrate(db, { log: cap.log, dir });
    await writeFile(path.join(dir, '002_tags.sql'), FILES['002_tags.sql'].replace('tag text', 'tag text, colour text'));
    await writeFile(path.join(dir, '003_index.sql'), FILES['003_index.sql']);
    await assert.rejects(migrate(db, { log: cap.log, dir }), (err) => {
      assert.ok(isAppError(err, 'database.migration_changed'));
      assert.ok(!err.message.includes('\n'), 'one line');
      assert.match(err.message, /002_tags\.sql was changed after it was applied .* new numbered file/);
      return true;
    });
    assert.equal((await db.query("SELECT 1 FROM pg_indexes WHERE indexname = 'tags_by_tag'")).rowCount, 0, '003 was not applied');
    // A checkout with Windows line ends is the same file, not a changed one.
    await writeFile(path.join(dir, '002_tags.sql'), FILES['002_tags.sql'].replace(/\n/g, '\r\n'));
    assert.deepEqual((await migrate(db, { log: cap.log, dir })).applied, ['003_index.sql']);
  } finally {
    await db.close();
  }
});

test('a database newer than the program (versions it has no file for) is accepted, said in the log, and keeps working', async () => {
  const url = await cluster.createDatabase();
  const { db, cap } = open(url);
  try {
    await migrate(db, { log: cap.log, dir: await folder(FILES) });
    // An older release: it knows 001 and 002 only.
    const older = await folder({ '001_notes.sql': FILES['001_notes.sql'], '002_tags.sql': FILES['002_tags.sql'] });
    assert.deepEqual(await migrate(db, { log: cap.log, dir: older }), { applied: [], newer: ['003_index.sql'] });
    assert.match(cap.text(), /the database has migrations this program does not have \(003_index\.sql\)/);
    await db.query('INSERT INTO notes VALUES (1, $1)', ['still works']);
  } finally {
    await db.close();
  }
});

test('risk: an older process running beside a migration it cannot read — a file marked "-- older versions stop" makes an older program stop with one line naming it', async () => {
  const url = await cluster.createDatabase();
  const { db, cap } = open(url);
  try {
    const newer = await folder({ ...FILES, '004_rename.sql': '-- older versions stop\nALTER TABLE tags RENAME COLUMN tag TO label;\n' });
    await migrate(db, { log: cap.log, dir: newer });
    const older = await folder(FILES);
    await assert.rejects(migrate(db, { log: cap.log, dir: older }), (err) => {
      assert.ok(isAppError(err, 'database.too_new'));
      assert.ok(!err.message.includes('\n'), 'one line');
      assert.match(err.message, /has 004_rename\.sql, from a newer version of the bot .* update this one/);
      return true;
    });
    // The newer program itself goes on.
    assert.deepEqual(await migrate(db, { log: cap.log, dir: newer }), { applied: [], newer: [] });
  } finally {
    await db.close();
  }
});

test('a migration the database refuses is applied not at all, and the error names the file', async () => {
  const url = await cluster.createDatabase();
  const { db, cap } = open(url);
  try {
    const dir = await folder({ '001_notes.sql': FILES['001_notes.sql'], '002_broken.sql': 'CREATE TABLE half (id int);\nSELEC 1;\n' });
    await assert.rejects(
      migrate(db, { log: cap.log, dir }),
      (err) => isAppError(err, 'database.rejected') && /002_broken\.sql: syntax error/.test(err.message),
    );
    assert.deepEqual((await db.query('SELECT name FROM schema_migrations')).rows, [{ name: '001_notes.sql' }]);
    assert.equal((await db.query("SELECT 1 FROM pg_tables WHERE tablename = 'half'")).rowCount, 0, 'the file ran in one transaction');
  } finally {
    await db.close();
  }
});
