/**
 * Versions of MEMORY.md (src/memory/versions.ts): every change keeps the previous text, the
 * last 50 per chat; /memory history lists them; /memory undo restores the text before the last
 * change (as a new version); the CLI lists and restores them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot } from '../helpers/app.js';
import { echoResponder, promptKind, text, type Responder } from '../helpers/fake-llm.js';
import { tempDir, testConfig } from '../helpers/workspace.js';
import { runChatCommand } from '../../src/cli/memory-chat.js';
import { silentLogger } from '../../src/core/log.js';
import { FileMemoryFiles } from '../../src/memory/file-memory.js';
import { MAX_VERSIONS, undoMemory } from '../../src/memory/versions.js';
import { memoryCli } from '../helpers/child.js';

const FACTS = '- The user is called Ada.\n- Ada keeps bees.\n';
const UPDATED = '- The user is called Ada.\n- Ada keeps bees.\n- Ada moved to Porto.\n';

const consolidation: Responder = (req, i) =>
  promptKind(req) === 'consolidation'
    ? text(JSON.stringify({ history_entry: '[2026-03-10 12:00] Ada moved.', memory_update: UPDATED }))
    : echoResponder(req, i);

test('/memory undo after a consolidation rewrite restores the previous text; /memory history lists both', async () => {
  const bot = await startTestBot({
    responder: consolidation,
    prepare: async (ws) => {
      await mkdir(path.join(ws, 'memory', 'test:1'), { recursive: true });
      await writeFile(path.join(ws, 'memory', 'test:1', 'MEMORY.md'), FACTS);
    },
  });
  const file = path.join(bot.workspace, 'memory', 'test:1', 'MEMORY.md');
  try {
    await bot.send('1', 'I moved to Porto');
    await bot.send('1', '/new');
    assert.equal(await readFile(file, 'utf8'), UPDATED);
    const [history] = await bot.send('1', '/memory history');
    assert.match(history!, /#2 {2}\d{4}-\d\d-\d\d \d\d:\d\d UTC {2}consolidation {2}\+1 −0 entries {2}\(current\)/);
    assert.match(history!, /#1 {2}.* {2}before versioning {2}\+2 −0 entries/);

    const [undone] = await bot.send('1', '/memory undo');
    assert.match(undone!, /^Undone: MEMORY\.md is back to version #1 .*saved as version #3\./);
    assert.equal(await readFile(file, 'utf8'), FACTS, 'the text before the rewrite, byte for byte');
    const [again] = await bot.send('1', '/memory undo');
    assert.match(again!, /^Nothing undone: There is no earlier version/);
    assert.equal(await readFile(file, 'utf8'), FACTS);
    const [after] = await bot.send('1', '/memory history');
    assert.match(after!, /#3 .* undo #2 {2}\+0 −1 entries {2}\(current\)/);
    // Versions live in the chat's own memory folder, nowhere else.
    assert.deepEqual((await readdir(path.join(bot.workspace, 'memory'))).sort(), ['test:1']);
    assert.ok((await readdir(path.join(bot.workspace, 'memory', 'test:1', 'versions'))).includes('index.json'));
    const [bad] = await bot.send('1', '/memory everything');
    assert.match(bad!, /Unknown option "everything"\. Use \/memory/);
  } finally {
    await bot.close();
  }
});

test('only the last 50 versions are kept; a hand edit between two changes is kept as its own version; undo walks back', async () => {
  const ws = await tempDir();
  try {
    const files = new FileMemoryFiles(ws.dir);
    for (let i = 0; i < 60; i++) await files.appendMemory(`fact ${i}`);
    const list = await files.versions.list();
    assert.equal(list.length, MAX_VERSIONS);
    assert.equal(list[0]!.n, 61, 'newest first (version 1 was the empty file)');
    assert.equal((await readdir(files.versions.dir)).filter((n) => n.endsWith('.md')).length, MAX_VERSIONS);

    await writeFile(path.join(ws.dir, 'MEMORY.md'), '- edited by hand\n');
    await files.appendMemory('after the edit');
    const [newest, hand] = await files.versions.list();
    assert.equal(hand!.source, 'hand edit');
    assert.equal(await files.versions.read(hand!.n), '- edited by hand\n');
    assert.equal(newest!.source, 'tool memory_add');

    assert.equal((await undoMemory(files)).ok, true);
    assert.equal(await readFile(path.join(ws.dir, 'MEMORY.md'), 'utf8'), '- edited by hand\n');
    assert.equal((await undoMemory(files)).ok, true, 'a second undo goes one step further back');
    assert.match(await readFile(path.join(ws.dir, 'MEMORY.md'), 'utf8'), /- fact 59\n$/);
  } finally {
    await ws.cleanup();
  }
});

test('npm run memory -- versions / restore --chat: lists the versions and restores one as a new version', async () => {
  const ws = await tempDir();
  try {
    const files = new FileMemoryFiles(path.join(ws.dir, 'memory', 'telegram:123'));
    await files.writeMemory(FACTS, 'consolidation');
    await files.writeMemory('- wrong\n', 'tool memory_rewrite');
    const listed = await memoryCli(['versions', '--chat', 'telegram:123'], { WORKSPACE_DIR: ws.dir });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^#3 .* tool memory_rewrite {2}\+1 −2 entries {2}\(current\)\n#2 .* consolidation {2}\+2 −0 entries\n#1 .* empty /);
    const restored = await memoryCli(['restore', '--chat', 'telegram:123', '--version', '2'], { WORKSPACE_DIR: ws.dir });
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stdout, /is now version #2 .*saved as version #4\./);
    assert.equal(await readFile(path.join(files.dir, 'MEMORY.md'), 'utf8'), FACTS);
    // Bad input, in-process (same function the CLI calls): a clear line and a non-zero code.
    const err: string[] = [];
    const io = { out: () => undefined, err: (l: string) => err.push(l) };
    const config = testConfig({ WORKSPACE_DIR: ws.dir });
    assert.equal(await runChatCommand('restore', ['--chat', 'telegram:123', '--version', '99'], config, silentLogger(), io), 1);
    assert.match(err.at(-1)!, /There is no version #99; list them with npm run memory -- versions --chat telegram:123/);
    assert.equal(await runChatCommand('versions', [], config, silentLogger(), io), 2);
    assert.match(err.at(-1)!, /needs --chat CHANNEL:ID/);
  } finally {
    await ws.cleanup();
  }
});
