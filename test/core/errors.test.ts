import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError, ERRORS, ERROR_CODES, declareErrors, errorText, isAppError, type ErrorCode } from '../../src/core/errors.js';
// The channels' own codes (telegram.*) join the table as their modules load: the app's list loads them all.
import '../../src/app/channels.js';

const ERRORS_DOC = fileURLToPath(new URL('../../docs/errors.md', import.meta.url));
const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** `code` → meaning, from the rows of the table whose header is `| code | meaning |`. */
async function documentedCodes(): Promise<Map<string, string>> {
  const lines = (await readFile(ERRORS_DOC, 'utf8')).split('\n');
  const cells = (l: string) =>
    l
      .trim()
      .replace(/^\|/, '')
      .replace(/\|$/, '')
      .split('|')
      .map((c) => c.trim());
  const header = lines.findIndex((l) => l.trim().startsWith('|') && cells(l)[0] === 'code');
  assert.ok(header >= 0, 'docs/errors.md has a table with a "code" column');
  const out = new Map<string, string>();
  for (let i = header + 2; i < lines.length && lines[i]!.trim().startsWith('|'); i++) {
    const [code, meaning] = cells(lines[i]!);
    const m = /^`([^`]+)`$/.exec(code ?? '');
    assert.ok(m, `row "${lines[i]}" starts with a code in backticks`);
    assert.ok(!out.has(m[1]!), `${m[1]} is listed once`);
    out.set(m[1]!, meaning ?? '');
  }
  return out;
}

test('every code in ERROR_CODES is in docs/errors.md, and the page lists no other code', async () => {
  const documented = await documentedCodes();
  const inCode = Object.keys(ERROR_CODES).sort();
  const inDoc = [...documented.keys()].sort();
  assert.deepEqual(
    inCode.filter((c) => !documented.has(c)),
    [],
    'codes missing from docs/errors.md',
  );
  assert.deepEqual(
    inDoc.filter((c) => !(c in ERROR_CODES)),
    [],
    'codes documented but not in src/core/errors.ts',
  );
  assert.deepEqual(inDoc, inCode);
  for (const c of inDoc) assert.ok(documented.get(c)!.length > 0, `${c} has a meaning on the page`);
});

test('each code makes its message from its own template, with the values the thrower gives', () => {
  for (const [code, e] of Object.entries(ERRORS)) assert.ok(e.message.length > 0 && e.meaning.length > 0, code);
  const err = new AppError('storage.not_a_file', { file: 'MEMORY.md', kind: 'a FIFO' });
  assert.equal(err.code, 'storage.not_a_file');
  assert.equal(err.message, 'MEMORY.md is not a regular file (it is a FIFO); it was not opened');
  assert.ok(isAppError(err, 'storage.not_a_file'));
  assert.equal(
    errorText('daemon.already_running', { pid: 42, workspace: '/srv/ws' }),
    'another daemon (pid 42) is already using /srv/ws; stop it first, or set WORKSPACE_DIR to another folder',
  );
  // Every placeholder is filled: no "{name}" or "undefined" left in a message.
  for (const code of Object.keys(ERRORS) as ErrorCode[]) {
    const names = [...ERRORS[code].message.matchAll(/\{([a-z]+)\}/g)].map((m) => m[1]!);
    const text = errorText(code, Object.fromEntries(names.map((n) => [n, `<${n}>`])) as never);
    assert.doesNotMatch(text, /\{|\}|undefined/, code);
  }
});

test("a channel's codes are its own: declared by its module, made from their templates like the daemon's, and a code cannot be declared twice", () => {
  // telegram.* is not in core/errors.ts: loading the channel (above) declared it.
  const err = new AppError('telegram.conflict', { what: 'getUpdates', detail: '409' });
  assert.equal(err.message, 'getUpdates: 409');
  assert.ok('telegram.conflict' in ERROR_CODES);
  assert.throws(
    () => declareErrors({ 'telegram.conflict': { meaning: 'another meaning', message: '{x}' } }),
    (e: unknown) => isAppError(e, 'internal.bug'),
  );
});

test('no plain Error is thrown from src/: every failure raised on purpose is an AppError with a code', async () => {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith('.ts')) {
        (await readFile(p, 'utf8')).split('\n').forEach((line, i) => {
          if (/\bnew Error\(/.test(line)) found.push(`${path.relative(SRC, p)}:${i + 1}: ${line.trim()}`);
        });
      }
    }
  };
  await walk(SRC);
  // The memory page's script (web/page.ts, web/script-*.ts) runs in the browser, where AppError does not exist.
  assert.deepEqual(
    found.filter((f) => !new RegExp(`^web\\${path.sep}(page|script-[a-z]+)\\.ts:`).test(f)),
    [],
  );
});
