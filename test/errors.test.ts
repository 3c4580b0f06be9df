import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '../src/errors.js';

const ERRORS_DOC = fileURLToPath(new URL('../docs/errors.md', import.meta.url));

/** `code` → meaning, from the rows of the table whose header is `| code | meaning |`. */
async function documentedCodes(): Promise<Map<string, string>> {
  const lines = (await readFile(ERRORS_DOC, 'utf8')).split('\n');
  const cells = (l: string) => l.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
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
    'codes documented but not in src/errors.ts',
  );
  assert.deepEqual(inDoc, inCode);
  for (const c of inDoc) assert.ok(documented.get(c)!.length > 0, `${c} has a meaning on the page`);
});
