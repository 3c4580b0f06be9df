import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isInside, resolveInside, safeComponent, sessionFileKey } from '../../src/storage/paths.js';
import { AppError } from '../../src/core/errors.js';
import { tempDir } from '../helpers/workspace.js';

function assertSafe(out: string, input: string): void {
  const label = JSON.stringify(input);
  assert.ok(out.length > 0, `${label} → empty name`);
  assert.ok(!out.includes('/'), `${label} → ${out} contains /`);
  assert.ok(!out.includes('\\'), `${label} → ${out} contains \\`);
  assert.ok(!out.includes('.'), `${label} → ${out} contains .`);
  assert.ok(!out.includes('\0'), `${label} → ${out} contains NUL`);
  assert.ok(out.length < 130, `${label} → ${out.length} chars`);
}

test('safeComponent turns hostile ids into one plain path component', () => {
  const inputs = ['../../etc/x', '/', '..', '.', 'a\0b', '\0', 'héllo wörld', '日本語', '😀', '', '.hidden', 'C:\\Windows', ' ', 'con'];
  for (const id of inputs) {
    const out = safeComponent(id);
    assertSafe(out, id);
    // One component: joining it under a directory stays directly inside that directory.
    assert.equal(path.dirname(path.join('/base', out)), '/base');
  }
  // The example in docs/how-it-works.md (Files), and ordinary ids stay readable.
  assert.equal(safeComponent('../../etc/x'), '%2E%2E%2F%2E%2E%2Fetc%2Fx');
  assert.equal(safeComponent('123456789'), '123456789');
  assert.equal(safeComponent('-100_abc'), '-100_abc');
  assert.equal(sessionFileKey('console', 'local'), 'console:local');
});

test('safeComponent never maps two different ids to the same name', () => {
  const ids = [
    'a/b',
    'a%2Fb',
    'a_b',
    'a-b',
    'a b',
    'a.b',
    'a%2Eb',
    'a:b',
    'a\\b',
    'A/b',
    'a/B',
    '..',
    '.',
    '%2E%2E',
    '',
    '\0',
    '\0empty',
    '%00empty',
    'empty',
    '%',
    '%25',
    'é',
    'e\u0301',
    '~',
    '%7E',
  ];
  const seen = new Map<string, string>();
  for (const id of ids) {
    const out = safeComponent(id);
    const clash = seen.get(out);
    assert.equal(clash, undefined, `${JSON.stringify(id)} and ${JSON.stringify(clash)} both map to ${out}`);
    seen.set(out, id);
  }
  // Channel and chat cannot trade characters through the ':' separator.
  assert.notEqual(sessionFileKey('a:b', 'c'), sessionFileKey('a', 'b:c'));
});

test('safeComponent cuts long ids under 130 chars and keeps them distinct', () => {
  const base = 'x'.repeat(500);
  const longIds = [
    base,
    `${base}y`,
    `${base}z`,
    `${'x'.repeat(499)}y`,
    '/'.repeat(300),
    `${'/'.repeat(300)}.`,
    '日本'.repeat(100),
    `${'x'.repeat(119)}`,
    `${'x'.repeat(121)}`,
  ];
  const outs = longIds.map((id) => safeComponent(id));
  for (const [i, out] of outs.entries()) assertSafe(out, longIds[i]!);
  assert.equal(new Set(outs).size, outs.length, 'long ids that share a prefix still get different names');
  // Stable: the same id always maps to the same file.
  assert.equal(safeComponent(base), outs[0]);
  // Short enough for NAME_MAX with the channel prefix and ".json".
  assert.ok(Buffer.byteLength(`${sessionFileKey('telegram', base)}.json`) <= 255);
});

test('resolveInside refuses escapes with storage.path_escape', async () => {
  const ws = await tempDir();
  try {
    const base = path.join(ws.dir, 'memory');
    const outside = path.join(ws.dir, 'outside');
    await mkdir(base);
    await mkdir(outside);
    await writeFile(path.join(outside, 'secret.md'), 'secret');
    await symlink(outside, path.join(base, 'link'));
    await symlink(path.join(outside, 'secret.md'), path.join(base, 'secret-link.md'));

    const refused = ['..', '../x', '../outside/secret.md', 'a/../../x', '/etc/passwd', base, 'a\0b', '\0', 'link', 'link/secret.md', 'secret-link.md'];
    for (const rel of refused) {
      await assert.rejects(
        resolveInside(base, rel),
        (err: unknown) => err instanceof AppError && err.code === 'storage.path_escape',
        `${JSON.stringify(rel)} should be refused`,
      );
    }
  } finally {
    await ws.cleanup();
  }
});

test('resolveInside refuses a path through a symlinked directory even when the file does not exist yet', async () => {
  const ws = await tempDir();
  try {
    const base = path.join(ws.dir, 'memory');
    const outside = path.join(ws.dir, 'outside');
    await mkdir(base);
    await mkdir(outside);
    await symlink(outside, path.join(base, 'link'));
    // A dangling link whose target is outside: writing to it would create the file outside.
    await symlink(path.join(outside, 'new.md'), path.join(base, 'dangling.md'));

    const accepted: string[] = [];
    for (const rel of ['link/new.md', 'link/sub/new.md', 'link/a/b/c.md', 'dangling.md']) {
      try {
        const got = await resolveInside(base, rel);
        accepted.push(`${rel} → ${got}`);
      } catch (err) {
        assert.ok(err instanceof AppError && err.code === 'storage.path_escape', `${rel}: ${String(err)}`);
      }
    }
    assert.deepEqual(accepted, [], 'these paths lead outside the base and should be refused');
  } finally {
    await ws.cleanup();
  }
});

test('resolveInside accepts ordinary relative paths, existing or not', async () => {
  const ws = await tempDir();
  try {
    const base = path.join(ws.dir, 'memory');
    await mkdir(path.join(base, 'a'), { recursive: true });
    await writeFile(path.join(base, 'a', 'b.md'), 'note');
    await symlink(path.join(base, 'a'), path.join(base, 'inner-link'));

    assert.equal(await resolveInside(base, 'a/b.md'), path.join(base, 'a', 'b.md'));
    assert.equal(await resolveInside(base, 'a/new.md'), path.join(base, 'a', 'new.md'));
    assert.equal(await resolveInside(base, 'MEMORY.md'), path.join(base, 'MEMORY.md'));
    assert.equal(await resolveInside(base, 'x/y/z.md'), path.join(base, 'x', 'y', 'z.md'));
    assert.equal(await resolveInside(base, './a/../a/b.md'), path.join(base, 'a', 'b.md'));
    // A link that stays inside the base is fine.
    assert.equal(await resolveInside(base, 'inner-link/b.md'), path.join(base, 'inner-link', 'b.md'));
  } finally {
    await ws.cleanup();
  }
});

test('isInside', () => {
  assert.equal(isInside('/a/b', '/a/b'), true);
  assert.equal(isInside('/a/b', '/a/b/c'), true);
  // A name that merely starts with two dots is still inside.
  assert.equal(isInside('/a/b', '/a/b/..c'), true);
  assert.equal(isInside('/a/b', '/a/b/..notes.md'), true);
  assert.equal(isInside('/a/b', '/a/bc'), false);
  assert.equal(isInside('/a/b', '/a'), false);
  assert.equal(isInside('/a/b', '/x'), false);
});
