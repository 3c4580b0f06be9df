/**
 * The memory contract (service.contract.ts) against FileMemoryService, then FileMemoryFiles on a
 * real temp directory: the history log (HISTORY.md + monthly files), append-only
 * writes, concurrent appends (in one process and across two), sections of MEMORY.md, search.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, readdir, utimes, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMemoryFiles, FileMemoryService } from '../../src/memory/file-memory.js';
import { tempDir } from '../helpers/workspace.js';
import { patient } from '../helpers/wait.js';
import { fileHarness } from '../helpers/stores.js';
import { memoryContract } from './service.contract.js';
import { collect } from '../../src/storage/portable.js';
import { isAppError } from '../../src/core/errors.js';

describe('FileMemoryService meets the memory contract', () =>
  memoryContract((scope) => fileHarness(async (dir) => new FileMemoryService(path.join(dir, 'memory'), scope))));

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const APPENDER = fileURLToPath(new URL('../fixtures/memory-appender.ts', import.meta.url));

async function withDir(fn: (dir: string, files: FileMemoryFiles) => Promise<void>): Promise<void> {
  const ws = await tempDir('membot-mem-');
  try {
    await fn(ws.dir, new FileMemoryFiles(ws.dir));
  } finally {
    await ws.cleanup();
  }
}

const read = (dir: string, name: string): Promise<string> => readFile(path.join(dir, name), 'utf8');

test('appendHistory: HISTORY.md gets every entry, each HISTORY-YYYY-MM.md only its month', () =>
  withDir(async (dir, files) => {
    const feb = new Date('2026-02-27T10:15:00.000Z');
    const mar = new Date('2026-03-02T08:00:00.000Z');
    await files.appendHistory('Talked about Docker health checks.', feb);
    await files.appendHistory('  Set up the CI pipeline.\n', mar);

    const all = await read(dir, 'HISTORY.md');
    assert.equal(all, '## 2026-02-27T10:15:00.000Z\nTalked about Docker health checks.\n\n## 2026-03-02T08:00:00.000Z\nSet up the CI pipeline.\n\n');
    assert.equal(await read(dir, 'HISTORY-2026-02.md'), '## 2026-02-27T10:15:00.000Z\nTalked about Docker health checks.\n\n');
    assert.equal(await read(dir, 'HISTORY-2026-03.md'), '## 2026-03-02T08:00:00.000Z\nSet up the CI pipeline.\n\n');
    assert.deepEqual((await readdir(dir)).filter((n) => n.startsWith('HISTORY')).sort(), ['HISTORY-2026-02.md', 'HISTORY-2026-03.md', 'HISTORY.md']);
  }));

test('history is append-only: earlier content is preserved byte for byte', () =>
  withDir(async (dir, files) => {
    // Hand-edited content with odd bytes (no trailing newline, CRLF, emoji) must survive as is.
    const before = '# My history\r\n\r\nKept exactly: ünïcödé 🐝 \t tabs';
    await writeFile(path.join(dir, 'HISTORY.md'), before);
    await files.appendHistory('first', new Date('2026-03-01T00:00:00Z'));
    const afterOne = await readFile(path.join(dir, 'HISTORY.md'));
    assert.ok(afterOne.subarray(0, Buffer.byteLength(before)).equals(Buffer.from(before)), 'the old bytes are a prefix of the new file');
    await files.appendHistory('second', new Date('2026-03-05T00:00:00Z'));
    const afterTwo = await readFile(path.join(dir, 'HISTORY.md'));
    assert.ok(afterTwo.subarray(0, afterOne.length).equals(afterOne));
    assert.ok(afterTwo.toString('utf8').endsWith('## 2026-03-05T00:00:00.000Z\nsecond\n\n'));
    const monthly = await readFile(path.join(dir, 'HISTORY-2026-03.md'));
    assert.equal(monthly.toString('utf8'), '## 2026-03-01T00:00:00.000Z\nfirst\n\n## 2026-03-05T00:00:00.000Z\nsecond\n\n');
  }));

test('appendNote is append-only and one line per call', () =>
  withDir(async (dir, files) => {
    await writeFile(path.join(dir, '2026-03-01.md'), '[08:00] User: hand written | Assistant: kept'); // no newline at end
    await files.appendNote('2026-03-01', '[09:00] User: a | Assistant: b');
    await files.appendNote('2026-03-01', '[09:05] User: c | Assistant: d');
    assert.equal(
      await read(dir, '2026-03-01.md'),
      '[08:00] User: hand written | Assistant: kept\n[09:00] User: a | Assistant: b\n[09:05] User: c | Assistant: d\n',
    );
  }));

test('200 parallel appendNote calls (chats sharing a global note): 200 whole lines, none lost or interleaved', () =>
  withDir(async (dir, files) => {
    const line = (i: number) => `[10:00] User: message ${i} ${'x'.repeat(i % 50)} | Assistant: ok ${i}`;
    await Promise.all(Array.from({ length: 200 }, (_, i) => files.appendNote('2026-03-02', line(i))));
    const lines = (await read(dir, '2026-03-02.md')).split('\n').filter(Boolean);
    assert.deepEqual(new Set(lines), new Set(Array.from({ length: 200 }, (_, i) => line(i))));
    assert.equal(lines.length, 200);
    assert.deepEqual(await readdir(dir), ['2026-03-02.md'], 'no temp or lock files');
  }));

test('50 parallel appendMemory calls in one process: 50 lines, none lost', () =>
  withDir(async (dir, files) => {
    await Promise.all(Array.from({ length: 50 }, (_, i) => files.appendMemory(`fact ${i}`)));
    const lines = (await read(dir, 'MEMORY.md')).split('\n').filter(Boolean);
    assert.equal(lines.length, 50);
    assert.deepEqual(new Set(lines), new Set(Array.from({ length: 50 }, (_, i) => `- fact ${i}`)));
    // No temp or lock files left behind; the versions kept beside it (versions.ts).
    assert.deepEqual(await readdir(dir), ['MEMORY.md', 'versions']);
    assert.ok((await readdir(path.join(dir, 'versions'))).every((n) => /^(\d+\.md|index\.json)$/.test(n)));
  }));

test('two processes appending 30 facts each to one MEMORY.md at once: 60 distinct lines', { timeout: patient(60_000) }, () =>
  withDir(async (dir) => {
    const children = ['alpha', 'beta'].map((tag) => {
      const child = spawn(process.execPath, ['--import', 'tsx', APPENDER, dir, tag, '30'], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const exited = once(child, 'exit') as Promise<[number | null]>;
      const ready = new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (out.includes('ready')) resolve();
        };
        child.stdout.on('data', check);
        void exited.then(() => reject(new Error(`${tag} exited before ready: ${err}`)));
      });
      return { tag, child, ready, exited, output: () => ({ out, err }) };
    });
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.child.stdin.write('go\n');
    for (const c of children) {
      const [code] = await c.exited;
      assert.equal(code, 0, `${c.tag}: ${c.output().err}`);
      assert.match(c.output().out, /done/);
    }
    const lines = (await read(dir, 'MEMORY.md')).split('\n').filter(Boolean);
    assert.equal(lines.length, 60);
    assert.equal(new Set(lines).size, 60);
    for (const tag of ['alpha', 'beta']) for (let i = 0; i < 30; i++) assert.ok(lines.includes(`- ${tag} fact ${i}`), `${tag} fact ${i} lost`);
  }),
);

const SECTIONED =
  '# Memory of Ada\n\n## Preferences\n- likes tea\n- hates meetings\n\n## Projects\n- beehive monitor\n### Details\n- ESP32 based\n\n## People\n- Bob is her brother\n';

test("rewriteSection replaces only that section's body", () =>
  withDir(async (dir, files) => {
    await writeFile(path.join(dir, 'MEMORY.md'), SECTIONED);
    await files.rewriteSection('Projects', '- garden irrigation\n- a Rust book\n');
    assert.equal(
      await read(dir, 'MEMORY.md'),
      '# Memory of Ada\n\n## Preferences\n- likes tea\n- hates meetings\n\n## Projects\n- garden irrigation\n- a Rust book\n\n## People\n- Bob is her brother\n',
    );
    // Section names match case-insensitively; the last section works too.
    await files.rewriteSection('people', '- Bob is her cousin');
    assert.equal(
      await read(dir, 'MEMORY.md'),
      '# Memory of Ada\n\n## Preferences\n- likes tea\n- hates meetings\n\n## Projects\n- garden irrigation\n- a Rust book\n\n## People\n- Bob is her cousin\n',
    );
    // A missing section is created at the end; the rest is untouched.
    await files.rewriteSection('Health', '- allergic to nuts');
    assert.ok((await read(dir, 'MEMORY.md')).endsWith('## People\n- Bob is her cousin\n\n## Health\n- allergic to nuts\n'));
  }));

test('appendMemory with a section extends it in place, or creates it', () =>
  withDir(async (dir, files) => {
    await writeFile(path.join(dir, 'MEMORY.md'), SECTIONED);
    await files.appendMemory('likes green tea most', 'Preferences');
    await files.appendMemory('line one\nline two', 'projects'); // newlines folded, case-insensitive section
    await files.appendMemory('speaks Portuguese', 'Languages');
    await files.appendMemory('no section fact');
    assert.equal(
      await read(dir, 'MEMORY.md'),
      '# Memory of Ada\n\n## Preferences\n- likes tea\n- hates meetings\n- likes green tea most\n\n## Projects\n- beehive monitor\n### Details\n- ESP32 based\n- line one line two\n\n## People\n- Bob is her brother\n\n## Languages\n- speaks Portuguese\n- no section fact\n',
    );
  }));

test('appendMemory on an empty folder creates MEMORY.md with the section', () =>
  withDir(async (dir, files) => {
    await files.appendMemory('likes tea', 'Preferences');
    assert.equal(await read(dir, 'MEMORY.md'), '## Preferences\n- likes tea\n');
  }));

async function searchFixture(dir: string, files: FileMemoryFiles): Promise<void> {
  await files.appendNote('2026-02-20', '[10:00] User: set up Docker | Assistant: done');
  await files.appendNote('2026-03-01', '[11:00] User: nothing here | Assistant: ok');
  await files.appendNote('2026-03-01', '[12:00] User: docker compose? | Assistant: yes, DOCKER compose');
  await files.appendHistory('Migrated the DoCkEr host.', new Date('2026-01-15T09:00:00Z'));
  await files.appendHistory('Unrelated entry.', new Date('2026-01-16T09:00:00Z'));
  await writeFile(path.join(dir, 'MEMORY.md'), '- docker in MEMORY.md is not a note\n');
}

test("search is case-insensitive over notes and history and returns each hit's date", () =>
  withDir(async (dir, files) => {
    await searchFixture(dir, files);
    const hits = await files.search('DOCKER');
    const byLine = new Map(hits.map((h) => [h.line, [h.date, h.source]]));
    assert.equal(hits.length, 3, JSON.stringify(hits));
    assert.deepEqual(byLine.get('[12:00] User: docker compose? | Assistant: yes, DOCKER compose'), ['2026-03-01', 'note']);
    assert.deepEqual(byLine.get('[10:00] User: set up Docker | Assistant: done'), ['2026-02-20', 'note']);
    // A history hit is reported once (not again from HISTORY.md), dated by its entry header.
    assert.deepEqual(byLine.get('Migrated the DoCkEr host.'), ['2026-01-15', 'history']);
    assert.deepEqual(await files.search('kubernetes'), []);
    assert.deepEqual(await files.search('   '), []);
  }));

test('search returns hits newest first across notes and history (as notes_search promises)', () =>
  withDir(async (dir, files) => {
    await searchFixture(dir, files);
    const hits = await files.search('docker');
    assert.deepEqual(
      hits.map((h) => `${h.date} ${h.source}`),
      ['2026-03-01 note', '2026-02-20 note', '2026-01-15 history'],
    );
  }));

test('search on a folder that does not exist yet finds nothing (no error)', async () => {
  const files = new FileMemoryFiles(path.join(REPO, 'no-such-memory-dir-for-tests'));
  assert.deepEqual(await files.search('x'), []);
  assert.deepEqual(await files.listNotes(), []);
  assert.equal(await files.readMemory(), '');
});

test('risk: cached memory files hide a hand edit — an edit of MEMORY.md or an old note shows up on the next read', () =>
  withDir(async (dir, files) => {
    const memory = path.join(dir, 'MEMORY.md');
    const note = path.join(dir, '2026-01-05.md');
    const old = new Date(Date.now() - 60_000);
    await writeFile(memory, '- likes tea\n');
    await writeFile(note, '[09:00] User: a | Assistant: b\n');
    await utimes(memory, old, old);
    await utimes(note, old, old);
    assert.equal(await files.readMemory(), '- likes tea\n');
    assert.equal(await files.readNote('2026-01-05'), '[09:00] User: a | Assistant: b\n');
    // Same size, same file (no rename), right after the cached read.
    await writeFile(memory, '- likes TEA\n');
    await writeFile(note, '[09:00] User: A | Assistant: B\n');
    assert.equal(await files.readMemory(), '- likes TEA\n');
    assert.equal(await files.readNote('2026-01-05'), '[09:00] User: A | Assistant: B\n');
  }));

test('a chat folder whose name cannot be read back as its chat (an id shortened with a hash) stops the move, not left behind', async () => {
  const ws = await tempDir('membot-mem-');
  try {
    const memory = new FileMemoryService(path.join(ws.dir, 'memory'), 'chat');
    await memory.forChat('console', 'x'.repeat(200)).writeMemory('- kept in a folder named with a hash');
    await assert.rejects(collect(memory.dump()), (err: unknown) => isAppError(err, 'input.invalid'));
    assert.equal(await memory.isEmpty(), false);
  } finally {
    await ws.cleanup();
  }
});
