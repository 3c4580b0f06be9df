/**
 * Reminders of chats the bot no longer serves, through the real daemon (`src/main.ts` in
 * Telegram mode against the Bot API emulator): a group taken off TELEGRAM_ALLOWED_GROUPS and a
 * user whose approval is revoked while it runs get no delivery (logged once per chat, not at
 * every tick); their reminders are kept, and `npm run memory -- reminders` lists and cancels
 * them while the daemon runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTelegramEmulator } from '../../helpers/telegram.js';
import { startFakeLlm } from '../../helpers/fake-llm.js';
import { tempDir } from '../../helpers/workspace.js';
import { childEnv, mainTs, memoryCli, telegramDaemonEnv, tsxLoader } from '../../helpers/child.js';
import { patient, waitFor } from '../../helpers/wait.js';
import { SqliteReminderStore } from '../../../src/features/reminders/sqlite-store.js';
import { FilePairingStore, pairingFile } from '../../../src/channels/telegram/pairing-file.js';
import { silentLogger } from '../../../src/core/log.js';

const OWNER = 111;
const PAIRED = 444;
const GONE_GROUP = '-3003';

test('no delivery to a group taken off the list or a user revoked while the daemon runs; their reminders are kept, listed and cancelled by the CLI', {
  timeout: patient(60_000),
}, async () => {
  const tg = await startTelegramEmulator();
  const llm = await startFakeLlm();
  const ws = await tempDir();
  const t0 = Date.now();
  // Due at the start, and a second round after the revoke below: 12 s in on an idle machine,
  // scaled (helpers/wait.ts) because the start alone took 8–15 s at load ~20, and a second round
  // due before the revoke would be delivered with the first.
  const store = new SqliteReminderStore(path.join(ws.dir, 'schedules.db'), silentLogger());
  const add = (chatId: string, text: string, dueAt: number) =>
    store.add({ chat: `telegram:${chatId}`, channel: 'telegram', chatId, text, dueAt, repeat: null, timezone: 'UTC', createdAt: t0 - 60_000 });
  for (const chat of [String(OWNER), String(PAIRED), GONE_GROUP]) await add(chat, `first for ${chat}`, t0 - 1000);
  await add(String(PAIRED), 'second for the revoked user', t0 + patient(12_000));
  await add(String(OWNER), 'second for the owner', t0 + patient(12_000) + 500);
  await store.close();
  await mkdir(path.join(ws.dir, 'telegram'), { recursive: true });
  await writeFile(
    pairingFile(ws.dir),
    JSON.stringify({ version: 1, approved: [{ userId: String(PAIRED), approvedAt: new Date().toISOString() }], pending: [], waiting: [] }),
  );

  const env = telegramDaemonEnv({ llmUrl: llm.url, workspace: ws.dir, tg }, { TELEGRAM_ALLOWED_USERS: String(OWNER), TELEGRAM_ALLOWED_GROUPS: '-4004' });
  const child = spawn(process.execPath, ['--import', tsxLoader, mainTs], { cwd: ws.dir, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (c: Buffer) => (log += c.toString()));
  const texts = (chat: number | string) => tg.botMessages(chat).map((m) => m.text);
  try {
    await waitFor(() => texts(OWNER).length >= 1 && texts(PAIRED).length >= 1, 20_000, 'the first reminders');
    assert.match(texts(PAIRED)[0]!, /first for 444$/, 'served while approved');
    assert.equal(await new FilePairingStore(pairingFile(ws.dir)).revoke(String(PAIRED)), true);

    await waitFor(() => texts(OWNER).length >= 2, 20_000, "the owner's second reminder");
    await new Promise((r) => setTimeout(r, 300));
    assert.match(texts(OWNER)[1]!, /second for the owner$/);
    assert.equal(texts(PAIRED).length, 1, 'nothing after the revoke');
    assert.deepEqual(texts(GONE_GROUP), [], 'nothing to a group no longer listed');
    const notServed = log.split('\n').filter((l) => l.includes('no longer serves this chat'));
    assert.equal(notServed.filter((l) => l.includes(`telegram:${GONE_GROUP}`)).length, 1, 'logged once for the group, over two ticks');
    assert.equal(notServed.filter((l) => l.includes(`telegram:${PAIRED}`)).length, 1, 'logged once for the user');

    // The CLI, with the daemon running: the kept reminders, numbered, then cancelled.
    const cliEnv = { WORKSPACE_DIR: ws.dir };
    const listed = await memoryCli(['reminders', '--chat', `telegram:${GONE_GROUP}`], cliEnv);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /Pending reminders of telegram:-3003 \(1\):\n {2}1\. \w{3} \d+ \w{3} \d{4}, \d\d:\d\d — first for -3003\n/);
    const user = await memoryCli(['reminders', '--chat', `telegram:${PAIRED}`], cliEnv);
    assert.match(user.stdout, /1\. .* — second for the revoked user/);
    const cancelled = await memoryCli(['reminders', '--chat', `telegram:${GONE_GROUP}`, 'cancel', 'all'], cliEnv);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.match(cancelled.stdout, /^Cancelled: .* — first for -3003\n$/);
    assert.match((await memoryCli(['reminders', '--chat', `telegram:${GONE_GROUP}`], cliEnv)).stdout, /^No pending reminders for telegram:-3003\.\n$/);
    const bad = await memoryCli(['reminders', '--chat', `telegram:${PAIRED}`, 'cancel', 'x'], cliEnv);
    assert.equal(bad.code, 2);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('close', r));
    await tg.close();
    await llm.close();
    await ws.cleanup();
  }
});
