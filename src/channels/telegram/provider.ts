/**
 * The Telegram channel as the app lists it (app/channels.ts): served when TELEGRAM_BOT_TOKEN is
 * set, made from its own settings (settings.ts) and what the app gives every channel.
 */
import { componentLogger } from '../../core/log.js';
import type { ChannelProvider } from '../provider.js';
import { TelegramChannel } from './channel.js';
import { TELEGRAM_SETTINGS, type TelegramConfig } from './settings.js';
import { chatShape } from './topics.js';
import { telegramStateInDatabase, telegramStateInFiles, type TelegramState } from './state.js';

export const telegramChannel: ChannelProvider<TelegramConfig, TelegramState> = {
  ...TELEGRAM_SETTINGS,
  create: (telegram, deps) =>
    new TelegramChannel({
      telegram: { ...telegram, botToken: telegram.botToken ?? '' },
      workspaceDir: deps.config.workspaceDir,
      log: componentLogger(deps.log, 'Telegram'),
      commands: deps.commands,
      media: deps.media,
      onFatal: () => deps.onFatal('Telegram refused the bot token'),
      unfinished: deps.unfinished,
      sharedMemory: deps.config.memoryScope === 'global',
      streaming: deps.config.streaming,
      groupAdminsManage: deps.config.groupAdminsManage,
      state: deps.state,
      pollGate: deps.pollGate,
    }),
  state: {
    files: (workspaceDir, log) => telegramStateInFiles(workspaceDir, componentLogger(log, 'Telegram')),
    postgres: (db, log, owner) => telegramStateInDatabase(db, componentLogger(log, 'Telegram'), owner),
  },
  chatShape,
};
