/**
 * Start-up: config → logger → services (createApp) → channel; and the graceful stop.
 * Bad settings print one line each and exit 2, before anything else starts.
 */
import dotenv from 'dotenv';
import { loadConfig } from './config/env.js';
import { componentLogger, createLogger, registerSecret } from './log.js';
import { createApp } from './app.js';
import { ConsoleChannel } from './channels/console.js';
import type { Channel } from './channels/types.js';
import { isAppError } from './errors.js';

async function main(): Promise<void> {
  // quiet: dotenv 17 otherwise prints a banner on stdout, which belongs to the replies.
  dotenv.config({ quiet: true });
  const { config, problems } = loadConfig();
  if (problems.length > 0) {
    for (const p of problems) process.stderr.write(`config: ${p}\n`);
    process.exit(2);
  }
  registerSecret(config.openaiApiKey);
  const log = createLogger({ level: config.logLevel, file: config.logFile });
  const mainLog = componentLogger(log, 'Main');

  let app: Awaited<ReturnType<typeof createApp>>;
  try {
    app = await createApp(config, log, { scheduler: true });
  } catch (err) {
    if (isAppError(err, 'config.invalid')) {
      process.stderr.write(`config: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const channel: Channel & { finished?: Promise<void> } = new ConsoleChannel({ chatId: config.consoleChatId });
  await channel.start((msg, reply) => app.handle(msg, reply));
  mainLog.info({ channel: channel.name, model: config.model, workspace: config.workspaceDir }, 'daemon started');

  let stopping = false;
  const shutdown = async (reason: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    mainLog.info({ reason }, 'stopping: no new messages, finishing running turns');
    await channel.stop();
    const { drained } = await app.stop();
    if (!drained) mainLog.warn({ timeoutMs: config.shutdownTimeoutMs }, 'some turns did not finish before the shutdown timeout');
    mainLog.info('stopped');
    log.flush();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  if (channel.finished) void channel.finished.then(() => shutdown('end of input'));
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${(err as Error)?.message ?? String(err)}\n`);
  process.exit(1);
});
