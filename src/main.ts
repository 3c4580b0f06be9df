/**
 * Start-up: config → logger → services (createApp) → channel; and the graceful stop.
 * Bad settings print one line each and exit 2, before anything else starts.
 */
import dotenv from 'dotenv';
import { configSecrets, loadConfig } from './config/env.js';
import { componentLogger, createLogger, registerSecret, scrubSecrets } from './core/log.js';
import { createApp } from './app/app.js';
import { ConsoleChannel } from './channels/console.js';
import { TelegramChannel } from './channels/telegram/channel.js';
import { keepInSession } from './channels/keep.js';
import { Transcriber } from './llm/transcribe.js';
import type { Channel } from './core/channel.js';
import { isAppError } from './core/errors.js';
import { acquireDaemonLock } from './storage/daemon-lock.js';
import { startConfiguredMemoryPage } from './web/start.js';

async function main(): Promise<void> {
  // quiet: dotenv 17 otherwise prints a banner on stdout, which belongs to the replies.
  dotenv.config({ quiet: true });
  const { config, problems, warnings } = loadConfig();
  for (const w of warnings) process.stderr.write(`config: ${w}\n`);
  if (problems.length > 0) {
    for (const p of problems) process.stderr.write(`config: ${p}\n`);
    process.exit(2);
  }
  for (const s of configSecrets(config)) registerSecret(s);
  const { telegram } = config;
  const log = createLogger({ level: config.logLevel, file: config.logFile });
  const mainLog = componentLogger(log, 'Main');

  let daemonLock: Awaited<ReturnType<typeof acquireDaemonLock>>;
  try {
    daemonLock = await acquireDaemonLock(config.workspaceDir);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
  if (daemonLock.removedLocks > 0) mainLog.warn({ removed: daemonLock.removedLocks }, 'the previous daemon was killed; removed the file locks it left');

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
  // Telegram when a bot token is set, else the terminal.
  let onFatal: (reason: string) => void = () => undefined;
  const channel: Channel & { finished?: Promise<void> } = telegram.botToken
    ? new TelegramChannel({
        telegram: { ...telegram, botToken: telegram.botToken },
        workspaceDir: config.workspaceDir,
        log: componentLogger(log, 'Telegram'),
        commands: app.commands.list(),
        transcriber: telegram.transcriptionModel ? new Transcriber(app.services.llm.sdk, telegram.transcriptionModel) : undefined,
        keep: keepInSession({ dispatcher: app.dispatcher, sessions: app.services.sessions }),
        images: { media: app.services.media, vision: app.services.models.anyVision },
        onFatal: () => onFatal('Telegram refused the bot token'),
        unfinished: app.leftOver(),
      })
    : new ConsoleChannel({ chatId: config.consoleChatId });
  try {
    await channel.start((msg, reply) => app.handle(msg, reply));
  } catch (err) {
    // E.g. a wrong token (getMe 401) or an unreachable Bot API: one line, no stack.
    process.stderr.write(`${channel.name}: ${scrubSecrets((err as Error).message)}\n`);
    log.flush();
    process.exit(1);
  }
  mainLog.info({ channel: channel.name, model: config.model, workspace: config.workspaceDir }, 'daemon started');
  // The memory page (MEMORY_PAGE_PORT): a failure to start it never stops the bot.
  const memoryPage = await startConfiguredMemoryPage(app.services, log).catch((err: unknown) => void mainLog.error({ err: (err as Error).message }, 'memory page could not start'));
  // Messages accepted before a kill and never finished are handled now, in their chats' order.
  void app
    .recover((msg) => channel.replyFor?.(msg) ?? ((text) => channel.send(msg.chatId, text)))
    .then(() => channel.settleInterrupted?.())
    .catch((err: unknown) => mainLog.error({ err }, 'recovery of unfinished messages failed'));
  // Reminders of this channel: those due while the daemon was down go out now (late), the rest on time.
  void app.services.reminders
    .start({ [channel.name]: (chatId, text) => channel.send(chatId, text) })
    .catch((err: unknown) => mainLog.error({ err }, 'reminders could not start'));

  let stopping = false;
  const shutdown = async (reason: string, exitCode = 0): Promise<void> => {
    if (stopping) return;
    stopping = true;
    mainLog.info({ reason }, 'stopping: no new messages, finishing running turns');
    await channel.stop();
    await memoryPage?.close();
    const { drained } = await app.stop();
    if (!drained) mainLog.warn({ timeoutMs: config.shutdownTimeoutMs }, 'some turns did not finish before the shutdown timeout');
    await daemonLock.release();
    mainLog.info('stopped');
    log.flush();
    process.exit(exitCode);
  };
  onFatal = (reason) => void shutdown(reason, 1);
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  if (channel.finished) void channel.finished.then(() => shutdown('end of input'));
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${(err as Error)?.message ?? String(err)}\n`);
  process.exit(1);
});
