/**
 * The channel's files in WORKSPACE_DIR, in one table, like the daemon's own (storage/workspace-files.ts):
 * they sit in a folder named after the channel, whose leftover locks the daemon lock clears
 * after a kill (main passes every channel's name: storage/daemon-lock.ts).
 */
import path from 'node:path';

export const TELEGRAM_FILES = {
  /** The folder, named after the channel (its `name`). */
  folder: 'telegram',
  /** Approved users and groups, pending codes (pairing-file.ts). */
  pairing: 'pairing.json',
  /** The update ids already taken (update-log.ts). */
  updates: 'updates.json',
  /** Streaming placeholders shown and not yet finished (placeholders.ts). */
  placeholders: 'placeholders.json',
} as const;

/** The path of one of the channel's files in a workspace. */
export function telegramFile(workspaceDir: string, file: Exclude<keyof typeof TELEGRAM_FILES, 'folder'>): string {
  return path.join(workspaceDir, TELEGRAM_FILES.folder, TELEGRAM_FILES[file]);
}
