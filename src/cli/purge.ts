import type { Config } from '../config/env.js';
import type { Logger } from '../log.js';
import type { CliIo } from './memory-chat.js';

export async function runPurge(_chat: { channel: string; chatId: string }, _args: string[], _config: Config, _log: Logger, io: CliIo): Promise<number> {
  io.err('purge is not available yet');
  return 1;
}
