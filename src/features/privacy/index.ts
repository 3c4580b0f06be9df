/**
 * What a person may ask the bot to give back or take out of its memory: `/forget <words>` (forget
 * the words everywhere: forget.ts, the command in forget-command.ts), `/export` (everything kept
 * about the chat as one file: export.ts, export-command.ts), and purge (every trace of one chat,
 * with the daemon stopped: purge.ts, run by `npm run memory -- purge`). A forget or purge a kill
 * cut short is finished at the next start (journal.ts).
 */
import type { Feature } from '../../turn/feature.js';
import type { ForgetService } from './forget.js';
import { createForgetCommand } from './forget-command.js';
import { createExportCommand, type ExportCommandDeps } from './export-command.js';

export interface PrivacyDeps extends ExportCommandDeps {
  forget: ForgetService;
}

export function privacyFeature(deps: PrivacyDeps): Feature {
  const { forget, ...exports } = deps;
  return { name: 'privacy', commands: [createForgetCommand({ forget }), createExportCommand(exports)] };
}
