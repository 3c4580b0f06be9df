/**
 * Two real daemons on one fresh PostgreSQL database, behind the test's Telegram emulator and fake
 * LLM (the tests of a chat changing process: stream-failover, handover). CLUSTER_LEASE_MS is 3 s;
 * `env` adds or overrides settings. `close` kills what still runs and removes the database and
 * workspaces (the emulator and the LLM are the test's to close).
 */
import pg from 'pg';
import { startPg } from '../helpers/pg.js';
import type { TelegramEmulator } from '../helpers/telegram.js';
import type { FakeLlm } from '../helpers/fake-llm.js';
import { tempDir } from '../helpers/workspace.js';
import { killDaemons, startDaemonChild, telegramDaemonEnv } from '../helpers/child.js';

export type Daemon = ReturnType<typeof startDaemonChild>;

export async function startTwoDaemons(
  to: { llm: FakeLlm; tg: TelegramEmulator },
  opts: { name: string; users: number[]; env?: Record<string, string> },
): Promise<{ db: pg.Client; daemons: Daemon[]; close(): Promise<void> }> {
  const cluster = await startPg();
  const url = await cluster.createDatabase();
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const workspaces = [await tempDir(`membot-${opts.name}-a-`), await tempDir(`membot-${opts.name}-b-`)];
  const daemons = workspaces.map((ws) =>
    startDaemonChild(
      telegramDaemonEnv(
        { llmUrl: to.llm.url, workspace: ws.dir, tg: to.tg },
        {
          DATABASE_URL: url,
          CLUSTER_LEASE_MS: '3000',
          TELEGRAM_ALLOWED_USERS: opts.users.join(','),
          TELEGRAM_DM_POLICY: 'allowlist',
          ...opts.env,
        },
      ),
      ws.dir,
    ),
  );
  return {
    db,
    daemons,
    async close() {
      await killDaemons(daemons.map((d) => d.child));
      await db.end();
      await cluster.stop();
      for (const ws of workspaces) await ws.cleanup();
    },
  };
}
