/**
 * `npm run bench -- cluster`: turns per second of the built daemon with DATABASE_URL when one,
 * two and three processes serve the bot together (docs/cluster.md), on one throwaway PostgreSQL
 * (fsync on) and the Telegram emulator. 30 chats send 10 messages each at once; the figure is
 * the messages answered over the time from the first sent to the last answer. The model answers
 * at once (the fake server): what is measured is the daemons' and the database's own work, on
 * this machine's cores — the processes share them.
 */
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startPg } from '../../test/helpers/pg.js';
import { startTelegramEmulator } from '../../test/helpers/telegram.js';
import { lastUserText, startFakeLlm, text } from '../../test/helpers/fake-llm.js';
import { tempDir } from '../../test/helpers/workspace.js';
import { repoRoot, startBuiltDaemon, telegramDaemonEnv, type BuiltDaemon } from '../../test/helpers/child.js';

const CHATS = 30;
const PER_CHAT = 10;
const FIRST_USER = 9001;

export async function benchCluster(): Promise<Record<string, string>> {
  const build = spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'build.mjs')], { cwd: repoRoot, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`build failed: ${build.stdout}${build.stderr}`);
  const pg = await startPg({ durable: true });
  const llm = await startFakeLlm((req) => text(`echo: ${lastUserText(req)}`));
  const out: Record<string, string> = {};
  try {
    for (const processes of [1, 2, 3]) {
      const tg = await startTelegramEmulator();
      const url = await pg.createDatabase();
      const daemons: BuiltDaemon[] = [];
      const dirs: Array<{ cleanup(): Promise<void> }> = [];
      try {
        for (let i = 0; i < processes; i++) {
          const ws = await tempDir('membot-bench-cluster-');
          dirs.push(ws);
          const env = telegramDaemonEnv(
            { llmUrl: llm.url, workspace: ws.dir, tg },
            {
              DATABASE_URL: url,
              STREAMING: 'off',
              TELEGRAM_ALLOWED_USERS: Array.from({ length: CHATS }, (_, c) => FIRST_USER + c).join(','),
              TELEGRAM_DM_POLICY: 'allowlist',
              RATE_LIMIT_PER_MINUTE: '0',
              MAX_QUEUED_PER_CHAT: '10000',
            },
          );
          daemons.push(startBuiltDaemon(env, ws.dir));
        }
        await Promise.all(daemons.map((d) => d.started));
        const users = Array.from({ length: CHATS }, (_, c) => tg.user({ userId: FIRST_USER + c }));
        const t0 = performance.now();
        await Promise.all(
          users.map(async (u) => {
            for (let m = 0; m < PER_CHAT; m++) await u.say(`m${m} in ${u.userId}`);
          }),
        );
        const total = CHATS * PER_CHAT;
        const echoes = () => tg.botMessages().filter((m) => m.text.startsWith('echo: '));
        // Every answer, or none new for 30 s (then what is missing is said, not waited for).
        for (let last = 0, since = performance.now(); echoes().length < total && performance.now() - since < 30_000; ) {
          if (echoes().length !== last) [last, since] = [echoes().length, performance.now()];
          await new Promise((r) => setTimeout(r, 20));
        }
        const got = echoes().map((m) => m.text.slice(6));
        if (got.length < total) {
          const others = tg
            .botMessages()
            .filter((m) => !m.text.startsWith('echo: '))
            .map((m) => m.text.slice(0, 80));
          const twice = got.filter((t, i) => got.indexOf(t) !== i);
          const file = path.join(os.tmpdir(), `membot-bench-cluster-${processes}.log`);
          await writeFile(file, daemons.map((d) => d.log()).join('\n'));
          const missing = users.flatMap((u) => Array.from({ length: PER_CHAT }, (_, m) => `m${m} in ${u.userId}`)).filter((t) => !got.includes(t));
          out[`${processes} processes, missing`] = `${JSON.stringify(missing.slice(0, 5))}; the daemons' logs: ${file}`;
          out[`${processes} processes, NOT ALL ANSWERED`] =
            `${got.length}/${total}; twice: ${JSON.stringify(twice.slice(0, 5))}; other replies: ${JSON.stringify(others.slice(0, 5))}`;
        }
        const s = (performance.now() - t0) / 1000;
        out[`${processes} process${processes === 1 ? '' : 'es'}`] = `${(total / s).toFixed(1)} turns/s (${total} messages in ${s.toFixed(1)} s)`;
      } finally {
        for (const d of daemons) d.child.kill('SIGTERM');
        await Promise.all(daemons.map((d) => d.exited));
        await tg.close();
        for (const d of dirs) await d.cleanup();
      }
    }
  } finally {
    await llm.close();
    await pg.stop();
  }
  return out;
}
