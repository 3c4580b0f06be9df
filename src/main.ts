/**
 * Start-up: config → logger → the app (createApp: its parts and features) → channel; and the graceful stop.
 * Bad settings print one line each and exit 2, before anything else starts.
 */
import { loadDotEnv } from './config/dotenv.js';
import { configSecrets, loadConfig } from './config/env.js';
import { componentLogger, createLogger, registerSecret, scrubSecrets } from './core/log.js';
import { createApp } from './app/app.js';
import { CHANNELS, chatShapes, servedChannel } from './app/channels.js';
import type { ServedFn } from './features/reminders/service.js';
import type { Channel } from './core/channel.js';
import { isAppError } from './core/errors.js';
import { acquireDaemonLock } from './storage/daemon-lock.js';
import { startConfiguredMemoryPage } from './web/start.js';
import { memoryReport } from './core/memory-report.js';
import { runMode, terminalBanner, type LogRoute } from './app/run-mode.js';
import { answerHelp } from './cli/help.js';
import { purgeOptions } from './cli/purge.js';
import { finishInterruptedPurges } from './features/privacy/purge.js';

async function main(): Promise<void> {
  answerHelp(process.argv.slice(2), DAEMON_USAGE);
  loadDotEnv();
  const { config, problems, warnings } = loadConfig(process.env, process.cwd(), CHANNELS);
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
  const provider = servedChannel(config);
  const log = createLogger({ level: config.logLevel, ...logDestination(mode.logs) });
  const mainLog = componentLogger(log, 'Main');
  // `kill -USR2 <pid>`: one log line of what the daemon holds in memory (docs/operations.md,
  // "Memory"). Set before anything slow: Node's default for SIGUSR2 is to end the process.
  process.on('SIGUSR2', () => mainLog.info({ memory: memoryReport() }, 'memory report'));

  // What has started, for the stop. SIGTERM and SIGINT are taken from here on, before anything
  // slow: one that comes while the daemon is still starting (MCP servers may already run) stops
  // what has started so far, the same way, instead of Node's default of ending the process there.
  let lockTaking: ReturnType<typeof acquireDaemonLock> | undefined;
  let appStarting: Promise<Awaited<ReturnType<typeof createApp>>> | undefined;
  let channel: Channel | undefined;
  let channelUp = false;
  let pageStarting: Promise<{ close(): Promise<void> } | undefined> | undefined;
  let stopping = false;
  const shutdown = async (reason: string, exitCode = 0): Promise<void> => {
    if (stopping) return;
    stopping = true;
    mainLog.info({ reason }, 'stopping: no new messages, finishing running turns');
    if (channelUp) await channel?.stop();
    await (await pageStarting?.catch(() => undefined))?.close();
    // An app still being made is waited for: its MCP servers run already and are ended by its stop.
    const app = await appStarting?.catch(() => undefined);
    if (app) {
      const { drained } = await app.stop();
      if (!drained) mainLog.warn({ timeoutMs: config.shutdownTimeoutMs }, 'some turns did not finish before the shutdown timeout');
    }
    await (await lockTaking?.catch(() => undefined))?.release();
    mainLog.info('stopped');
    log.flush();
    process.exit(exitCode);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  let daemonLock: Awaited<typeof lockTaking>;
  try {
    lockTaking = acquireDaemonLock(
      config.workspaceDir,
      CHANNELS.map((c) => c.name),
    );
    daemonLock = await lockTaking;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
  if (stopping) return;
  if (daemonLock.removedLocks > 0) mainLog.warn({ removed: daemonLock.removedLocks }, 'the previous daemon was killed; removed the file locks it left');

  let app: Awaited<ReturnType<typeof createApp>>;
  try {
    appStarting = createApp(config, log, {
      scheduler: true,
      // With DATABASE_URL any number of processes serve the bot together (docs/cluster.md).
      ...(config.database.url ? { cluster: { channel: provider.name } } : {}),
      // A purge a kill cut short (npm run memory -- purge) is finished before anything opens the chat's files.
      beforeChats: (journal, db) =>
        finishInterruptedPurges({ ...purgeOptions(config, componentLogger(log, 'Purge'), db), journal }).then(
          () => undefined,
          (err: unknown) => mainLog.error({ err }, 'a purge cut off by the last stop could not be finished; tried again at the next start'),
        ),
    });
    app = await appStarting;
  } catch (err) {
    if (isAppError(err, 'config.invalid')) {
      process.stderr.write(`config: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  if (stopping) return;
  // The first channel the settings ask for (Telegram when a bot token is set), else the terminal.
  const started = provider.create(config.channels[provider.name]!, {
    config,
    log,
    commands: app.commands.list(),
    media: app.parts.media,
    onFatal: (reason) => void shutdown(reason, 1),
    unfinished: app.leftOver(),
    state: app.parts.channelState(provider),
    pollGate: app.parts.cluster?.pollGate,
  });
  channel = started;
  try {
    await started.start((msg, reply) => app.handle(msg, reply));
  } catch (err) {
    // A stop meanwhile (its getMe cut short) is that stop's to finish.
    if (stopping) return;
    // E.g. a wrong token (getMe 401) or an unreachable Bot API: one line, no stack.
    process.stderr.write(`${started.name}: ${scrubSecrets((err as Error).message)}\n`);
    log.flush();
    process.exit(1);
  }
  if (stopping) return;
  channelUp = true;
  mainLog.info({ channel: started.name, model: config.model, workspace: config.workspaceDir }, 'daemon started');
  // The memory page (MEMORY_PAGE_PORT): a failure to start it never stops the bot.
  const { sessions, memory, index, usage, forget, pending, pageToken } = app.parts;
  pageStarting = startConfiguredMemoryPage(config, { sessions, memory, index, usage, forget, pending, chatShapes: chatShapes() }, log, pageToken).catch(
    (err: unknown) => void mainLog.error({ err: (err as Error).message }, 'memory page could not start'),
  );
  await pageStarting;
  if (stopping) return;
  if (mode.terminal && mode.logs.kind === 'file') {
    started.greet?.(terminalBanner({ model: config.model, chatId: config.consoleChatId, logFile: mode.logs.file, cwd: process.cwd() }));
  }
  // Messages accepted before a kill and never finished are handled now, in their chats' order.
  // A /forget the last run did not finish was finished at start (createApp): its chat is told.
  void app
    .recover(
      (msg) => started.replyFor(msg),
      { [started.name]: (chatId, text) => started.send(chatId, text) },
      started.takeOver ? (msg) => started.takeOver!(msg) : undefined,
    )
    // In a cluster the placeholders left over may be another running process's answers: kept as they are.
    .then(() => (app.clustered ? 0 : started.settleInterrupted?.()))
    .catch((err: unknown) => mainLog.error({ err }, 'recovery of unfinished messages failed'));
  // Reminders of this channel: those due while the daemon was down go out now (late), the rest on time.
  // A chat the channel no longer serves (a group taken off the list, a revoked user) gets none.
  const served: Record<string, ServedFn> = started.serves ? { [started.name]: (chatId) => started.serves!(chatId) } : {};
  void app.parts.reminders
    .start({ [started.name]: (chatId, text) => started.send(chatId, text) }, served)
    .catch((err: unknown) => mainLog.error({ err }, 'reminders could not start'));
  // Piped input ended: the daemon stops once every line is answered (in a cluster, by the process that claims the chat).
  if (started.finished) void started.finished.then(() => app.settled(started.name)).then(() => shutdown('end of input'));
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
