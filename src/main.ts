/**
 * Start-up: config → logger → services (createApp) → channel; and the graceful stop.
 * Bad settings print one line each and exit 2, before anything else starts.
 */
import { loadDotEnv } from './config/dotenv.js';
import { configSecrets, loadConfig } from './config/env.js';
import { componentLogger, createLogger, registerSecret, scrubSecrets } from './core/log.js';
import { createApp } from './app/app.js';
import { ConsoleChannel } from './channels/console.js';
import { TelegramChannel } from './channels/telegram/channel.js';
import type { ServedFn } from './reminders/service.js';
import type { Channel } from './core/channel.js';
import { isAppError } from './core/errors.js';
import { acquireDaemonLock } from './storage/daemon-lock.js';
import { startConfiguredMemoryPage } from './web/start.js';
import { memoryReport } from './core/memory-report.js';
import { runMode, terminalBanner, type LogRoute } from './app/run-mode.js';
import { answerHelp } from './cli/help.js';

async function main(): Promise<void> {
  answerHelp(process.argv.slice(2), DAEMON_USAGE);
  loadDotEnv();
  const { config, problems, warnings } = loadConfig();
  for (const w of warnings) process.stderr.write(`config: ${w}\n`);
  if (problems.length > 0) {
    for (const p of problems) process.stderr.write(`config: ${p}\n`);
    process.exit(2);
  }
  const mode = runMode(config, process.env, Boolean(process.stdin.isTTY));
  if (mode.refusal) {
    process.stderr.write(`config: ${mode.refusal}\n`);
    process.exit(2);
  }
  for (const s of configSecrets(config)) registerSecret(s);
  const { telegram } = config;
  const log = createLogger({ level: config.logLevel, ...logDestination(mode.logs) });
  const mainLog = componentLogger(log, 'Main');
  // `kill -USR2 <pid>`: one log line of what the daemon holds in memory (docs/operations.md,
  // "Memory"). Set before anything slow: Node's default for SIGUSR2 is to end the process.
  process.on('SIGUSR2', () => mainLog.info({ memory: memoryReport() }, 'memory report'));

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
        media: app.services.media,
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
  if (mode.terminal && mode.logs.kind === 'file' && channel instanceof ConsoleChannel) {
    channel.greet(terminalBanner({ model: config.model, chatId: config.consoleChatId, logFile: mode.logs.file, cwd: process.cwd() }));
  }
  // Messages accepted before a kill and never finished are handled now, in their chats' order.
  void app
    .recover((msg) => channel.replyFor?.(msg) ?? ((text) => channel.send(msg.chatId, text)))
    .then(() => channel.settleInterrupted?.())
    .catch((err: unknown) => mainLog.error({ err }, 'recovery of unfinished messages failed'));
  // Reminders of this channel: those due while the daemon was down go out now (late), the rest on time.
  // A chat the channel no longer serves (a group taken off the list, a revoked user) gets none.
  const served: Record<string, ServedFn> = channel instanceof TelegramChannel ? { [channel.name]: (chatId) => channel.serves(chatId) } : {};
  void app.services.reminders
    .start({ [channel.name]: (chatId, text) => channel.send(chatId, text) }, served)
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

const DAEMON_USAGE = [
  'usage: npm start                       the bot: Telegram when TELEGRAM_BOT_TOKEN is set, else a chat in this terminal',
  '       npm start --silent < input.txt  piped: one message per line in, one reply per message on stdout',
  'Settings come from .env (npm run setup writes it; all of them: docs/configuration.md). Under pm2: npm run build && npx pm2 start ecosystem.config.js',
].join('\n');

function logDestination(route: LogRoute): { file?: string; split?: boolean } {
  return route.kind === 'file' ? { file: route.file } : route.kind === 'split' ? { split: true } : {};
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${(err as Error)?.message ?? String(err)}\n`);
  process.exit(1);
});
