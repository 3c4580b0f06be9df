/**
 * An album cut by a kill: the real daemon (`node --import tsx src/main.ts`) takes an album's
 * items from the emulator and journals them, and is killed (SIGKILL) while the album still
 * waits for more pictures. The next start answers the album once — not once per picture, and
 * not never.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTelegramEmulator } from '../../helpers/telegram.js';
import { startFakeLlm } from '../../helpers/fake-llm.js';
import { tempDir } from '../../helpers/workspace.js';
import { childEnv, mainTs, telegramDaemonEnv, tsxLoader } from '../../helpers/child.js';
import { png } from '../../helpers/images.js';
import { patient, waitFor } from '../../helpers/wait.js';

const OWNER = 111;

function daemon(env: Record<string, string>, cwd: string): { child: ChildProcess; log: () => string; exited: Promise<unknown> } {
  const child = spawn(process.execPath, ['--import', tsxLoader, mainTs], { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  // Only for a daemon that hangs (counted from the spawn, the start under tsx included).
  const guard = setTimeout(() => child.kill('SIGKILL'), patient(60_000));
  const exited = new Promise((resolve) => child.on('close', () => resolve(clearTimeout(guard))));
  return { child, log: () => log, exited };
}

/** The daemon (SIGTERM if it still runs), then the servers and the workspace. */
async function stopAll(run: ReturnType<typeof daemon>, servers: Array<{ close(): Promise<void> }>, ws: { cleanup(): Promise<void> }): Promise<void> {
  if (run.child.exitCode === null && run.child.signalCode === null) {
    run.child.kill('SIGTERM');
    await run.exited;
  }
  for (const s of servers) await s.close();
  await ws.cleanup();
}

async function text(file: string): Promise<string> {
  return readFile(file, 'utf8').catch(() => '');
}

test('killed while an album waits for more pictures: after the restart it is answered once, with all its pictures', { timeout: patient(120_000) }, async () => {
  const tg = await startTelegramEmulator();
  const llm = await startFakeLlm();
  const ws = await tempDir();
  const env = telegramDaemonEnv({ llmUrl: llm.url, workspace: ws.dir, tg }, { TELEGRAM_ALLOWED_USERS: String(OWNER), LLM_MODEL: 'gpt-4o' });
  let run = daemon({ ...env, ALBUM_WAIT_MS: '60000' }, ws.dir);
  try {
    for (const id of ['r1', 'r2', 'r3']) tg.addFile(`${id}_l`, png(300, 200), `photos/${id}.png`);
    await waitFor(() => run.log().includes('daemon started'), 30_000, 'the daemon to start');
    const owner = tg.user({ userId: OWNER });
    for (const [i, id] of ['r1', 'r2', 'r3'].entries()) {
      await owner.send({
        photo: [{ file_id: `${id}_l`, file_unique_id: `u_${id}`, width: 300, height: 200, file_size: 5000 }],
        media_group_id: 'g900',
        ...(i === 0 ? { caption: 'before the crash' } : {}),
      });
    }
    // All three journaled and their updates taken; the album's window (60 s) is still open.
    const inbox = path.join(ws.dir, 'inbox.jsonl');
    const updates = path.join(ws.dir, 'telegram', 'updates.json');
    let journaled = 0;
    let taken = 0;
    // On a timeout the assertions below say which count fell short.
    await waitFor(
      async () => {
        journaled = ((await text(inbox)).match(/"t":"in"/g) ?? []).length;
        taken = ((await text(updates)).match(/\[\d+,\d+\]/g) ?? []).length;
        return journaled === 3 && taken === 3;
      },
      20_000,
      'three pictures journaled and taken',
    ).catch(() => undefined);
    assert.equal(journaled, 3, run.log());
    assert.equal(taken, 3);
    assert.equal(tg.botMessages(OWNER).length, 0, 'no answer before the window closed');
    assert.equal(llm.chatRequests().length, 0);
    run.child.kill('SIGKILL');
    await run.exited;

    run = daemon({ ...env, ALBUM_WAIT_MS: '300' }, ws.dir);
    const [reply] = await tg.waitForBotMessages(OWNER, 1, 30_000);
    assert.equal(reply!.text, 'echo: [Photo] before the crash\n[Photo]\n[Photo]');
    await owner.say('after');
    assert.deepEqual(
      (await tg.waitForBotMessages(OWNER, 2, 30_000)).map((m) => m.text),
      ['echo: [Photo] before the crash\n[Photo]\n[Photo]', 'echo: after'],
      'one answer for the album, then the next message',
    );
    const first = llm.chatRequests()[0]!.body.messages.at(-1).content;
    assert.equal(first.filter((p: { type: string }) => p.type === 'image_url').length, 3);
    assert.equal(llm.chatRequests().length, 2);
  } finally {
    await stopAll(run, [tg, llm], ws);
  }
});

test("in a group, killed after the album's addressed picture: its other pictures, sent after the restart, still join it", {
  timeout: patient(120_000),
}, async () => {
  const GROUP = -1009;
  const tg = await startTelegramEmulator();
  const llm = await startFakeLlm();
  const ws = await tempDir();
  const env = telegramDaemonEnv({ llmUrl: llm.url, workspace: ws.dir, tg }, { TELEGRAM_ALLOWED_GROUPS: String(GROUP), LLM_MODEL: 'gpt-4o' });
  let run = daemon({ ...env, ALBUM_WAIT_MS: '60000' }, ws.dir);
  try {
    tg.intercept('setMessageReaction', () => ({ json: { ok: true, result: true } }));
    for (const id of ['k1', 'k2', 'k3']) tg.addFile(`${id}_l`, png(300, 200), `photos/${id}.png`);
    const alice = tg.user({ userId: 301, chatId: GROUP, type: 'supergroup', chatTitle: 'Team', firstName: 'Alice' });
    const picture = (id: string) => ({
      photo: [{ file_id: `${id}_l`, file_unique_id: `u_${id}`, width: 300, height: 200, file_size: 5000 }],
      media_group_id: 'g950',
    });
    await waitFor(() => run.log().includes('daemon started'), 30_000, 'the daemon to start');
    // Only the captioned picture (the one that names the bot) reaches this run.
    await alice.send({ ...picture('k1'), caption: '@TestNameBot which one is sharpest?' });
    // Journaled and its update taken: the next run gets it from the journal, not from Telegram again.
    const inbox = path.join(ws.dir, 'inbox.jsonl');
    const updates = path.join(ws.dir, 'telegram', 'updates.json');
    let state = '';
    await waitFor(
      async () => (state = `${((await text(inbox)).match(/"t":"in"/g) ?? []).length}/${((await text(updates)).match(/\[\d+,\d+\]/g) ?? []).length}`) === '1/1',
      20_000,
      'the picture journaled and taken',
    ).catch(() => undefined);
    assert.equal(state, '1/1', `journaled/taken; ${run.log()}`);
    run.child.kill('SIGKILL');
    await run.exited;

    // The rest of the album, without a caption: this run never saw the mention.
    await alice.send(picture('k2'));
    await alice.send(picture('k3'));
    run = daemon({ ...env, ALBUM_WAIT_MS: '5000' }, ws.dir);
    const [reply] = await tg.waitForBotMessages(GROUP, 1, 30_000);
    assert.equal(reply!.text, 'echo: [Photo] which one is sharpest?\n[Photo]\n[Photo]', run.log());
    const request = llm.chatRequests()[0]!.body.messages.at(-1).content;
    assert.equal(request.filter((p: { type: string }) => p.type === 'image_url').length, 3);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(tg.botMessages(GROUP).length, 1, 'one answer for the album');
  } finally {
    await stopAll(run, [tg, llm], ws);
  }
});
