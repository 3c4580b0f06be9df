/**
 * The memory page reads memory through the bot's own guarded readers (issue 25 item 6): a
 * memory file that is a link out of the chat's folder, a FIFO, or a session file that is one,
 * never stalls the daemon or leaks a byte; secrets are scrubbed as in the prompt; a slow read
 * answers within its deadline.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { TOKEN, startPageBot } from './helpers.js';
import { withinDeadline } from '../../src/web/data.js';
import { isAppError } from '../../src/core/errors.js';
import { tempDir } from '../helpers/workspace.js';
import { patient } from '../helpers/wait.js';

const auth = { authorization: `Bearer ${TOKEN}` };
/** A GET that must answer within `ms` (a FIFO opened for reading would hold it for ever). */
async function get(url: string, ms = 8_000): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers: auth, signal: AbortSignal.timeout(ms) });
  return { status: res.status, body: await res.json() };
}

test('links out of the chat folder are refused: MEMORY.md, a daily note and versions/ pointing elsewhere show nothing of the target', async () => {
  const t = await startPageBot();
  const outside = await tempDir();
  try {
    const dir = path.dirname(t.memoryFile);
    await writeFile(path.join(outside.dir, 'secret.md'), 'OUTSIDE-SECRET-7731\n');
    await rm(t.memoryFile);
    await symlink(path.join(outside.dir, 'secret.md'), t.memoryFile);
    await symlink(path.join(outside.dir, 'secret.md'), path.join(dir, '2026-01-02.md'));
    const chat = await get(`${t.page.url}api/chat?chat=test:1`);
    assert.equal(chat.status, 503);
    assert.match(chat.body.error, /MEMORY\.md|link to outside/);
    assert.doesNotMatch(JSON.stringify(chat.body), /OUTSIDE-SECRET/);
    await rm(t.memoryFile);
    await writeFile(t.memoryFile, '- fine\n');
    const again = await get(`${t.page.url}api/chat?chat=test:1`);
    assert.equal(again.status, 200);
    assert.doesNotMatch(JSON.stringify(again.body), /OUTSIDE-SECRET/, 'the linked daily note shows as empty');
    await rm(path.join(dir, 'versions'), { recursive: true, force: true });
    await mkdir(path.join(outside.dir, 'versions'));
    await writeFile(path.join(outside.dir, 'versions', '1.md'), 'OUTSIDE-SECRET-7731\n');
    await symlink(path.join(outside.dir, 'versions'), path.join(dir, 'versions'));
    await writeFile(
      path.join(outside.dir, 'versions', 'index.json'),
      JSON.stringify({ version: 1, next: 2, entries: [{ n: 1, at: 'OUTSIDE-SECRET-7731', source: 'x' }], refused: { count: 0 } }),
    );
    const version = await get(`${t.page.url}api/version?chat=test:1&n=1`);
    assert.doesNotMatch(JSON.stringify(version.body), /OUTSIDE-SECRET/);
    const listed = await get(`${t.page.url}api/chat?chat=test:1`);
    assert.doesNotMatch(JSON.stringify(listed.body), /OUTSIDE-SECRET/, 'versions/ linking out: its index is not read either');
  } finally {
    await t.close();
    await outside.cleanup();
  }
});

test('a FIFO as MEMORY.md, as a daily note and as a session file: the page answers at once and the bot goes on answering', async () => {
  const t = await startPageBot();
  try {
    const dir = path.dirname(t.memoryFile);
    await rm(t.memoryFile);
    execFileSync('mkfifo', [t.memoryFile]);
    execFileSync('mkfifo', [path.join(dir, '2026-01-03.md')]);
    execFileSync('mkfifo', [path.join(t.bot.workspace, 'sessions', 'test:9.json')]);
    await mkdir(path.join(dir, 'versions'), { recursive: true });
    await rm(path.join(dir, 'versions', 'index.json'), { force: true });
    execFileSync('mkfifo', [path.join(dir, 'versions', 'index.json')]);
    const chats = await get(`${t.page.url}api/chats`);
    assert.equal(chats.status, 200, 'the chat list is not held by the FIFO in sessions/');
    const chat = await get(`${t.page.url}api/chat?chat=test:1`);
    assert.equal(chat.status, 503);
    assert.match(chat.body.error, /not a regular file/);
    // Every thread-pool thread would be stuck on a FIFO opened without O_NONBLOCK: the bot still answers.
    for (let i = 0; i < 6; i++) await get(`${t.page.url}api/chat?chat=test:1`);
    assert.deepEqual(await t.bot.send('2', 'still there?'), ['echo: still there?']);
  } finally {
    await t.close();
  }
});

test('a key written into MEMORY.md by hand is shown redacted, as the prompt gets it', async () => {
  const t = await startPageBot();
  try {
    const key = 'sk-test-redact-me-0123456789abcdef';
    const { registerSecret } = await import('../../src/core/log.js');
    registerSecret(key);
    await writeFile(t.memoryFile, `- The API key is ${key}\n`);
    // The page caches nothing of its own: a write older than two seconds is what the prompt reads too.
    const chat = await get(`${t.page.url}api/chat?chat=test:1`);
    assert.equal(chat.status, 200);
    assert.doesNotMatch(JSON.stringify(chat.body), new RegExp(key));
    assert.match(chat.body.memory.text, /\[redacted\]/);
  } finally {
    await t.close();
  }
});

test('a read that does not come within its deadline is answered with storage.read_timeout', async () => {
  const started = Date.now();
  await assert.rejects(
    withinDeadline('slow.md', new Promise(() => undefined), 50),
    (err) => isAppError(err, 'storage.read_timeout') && /slow\.md was not read within 50 ms/.test(err.message),
  );
  assert.ok(Date.now() - started < patient(2_000));
  assert.equal(await withinDeadline('fast.md', Promise.resolve('text'), 50), 'text');
});
