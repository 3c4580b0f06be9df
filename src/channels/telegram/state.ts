/**
 * What the Telegram channel keeps across starts — the update ids taken (update-log.ts), the
 * pairing (pairing.ts), the placeholders of answers being streamed (placeholders.ts) — in the
 * workspace's `telegram/` folder, or with DATABASE_URL in PostgreSQL. The app chooses which
 * (app/stores.ts, through the provider's `state`); the channel uses what it is given.
 */
import type { Logger } from '../../core/log.js';
import { FileKeptValue } from '../../storage/kept.js';
import type { Database } from '../../storage/pg/database.js';
import type { ProcessOwner } from '../../storage/pg/owner.js';
import { telegramFile } from './files.js';
import { FilePairingStore } from './pairing-file.js';
import { PgPairingStore } from './pairing-pg.js';
import { PlaceholderStore, type Placeholders } from './placeholders.js';
import { PgPlaceholders } from './placeholders-pg.js';
import type { PairingStore } from './pairing.js';
import { PgUpdateLog } from './update-log-pg.js';
import { FileUpdateLog, type UpdateLog } from './update-log.js';

export interface TelegramState {
  /** Not loaded: the channel loads it at its start. */
  updateLog: UpdateLog;
  pairing: PairingStore;
  /** The placeholders of answers being streamed (placeholders.ts). */
  placeholders: Placeholders;
}

export function telegramStateInFiles(workspaceDir: string, log: Logger): TelegramState {
  return {
    updateLog: FileUpdateLog.inWorkspace(workspaceDir, log),
    pairing: FilePairingStore.inWorkspace(workspaceDir),
    placeholders: new PlaceholderStore(new FileKeptValue(telegramFile(workspaceDir, 'placeholders')), log),
  };
}

/** `owner`: the process, whose placeholders are its own (several processes may serve the bot). */
export function telegramStateInDatabase(db: Database, log: Logger, owner: ProcessOwner): TelegramState {
  return {
    updateLog: new PgUpdateLog(db, log),
    pairing: new PgPairingStore(db),
    placeholders: new PgPlaceholders(db, owner, log),
  };
}
