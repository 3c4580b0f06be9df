/**
 * Installs the features (features.ts): their systems into the pipeline (turn/runner.ts orders them
 * by the ORDER table and refuses two on one number), their commands into the router after /help
 * and the commands that are no feature's, their tools into the registry. Two features of one
 * name, two commands or two tools of one name are refused here, when the daemon starts.
 */
import { AppError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Feature } from '../turn/feature.js';
import type { Command } from '../turn/command.js';
import { Pipeline } from '../turn/runner.js';
import type { ToolRegistry } from '../tools/registry.js';
import { CommandRouter } from '../dispatch/router.js';
import { createHelpCommand } from '../dispatch/help.js';

export interface Installed {
  pipeline: Pipeline;
  commands: CommandRouter;
}

export interface InstallOptions {
  /** The commands that are no feature's own (/new), listed after /help and before the features'. */
  own: Command[];
  /** Where the features' tools go (MCP servers' tools join it as a source). */
  tools: ToolRegistry;
  /** GROUP_ADMINS_MANAGE (the channel decides who is an admin; the router words its refusals). */
  adminsManage: boolean;
  log: Logger;
}

export function installFeatures(features: readonly Feature[], opts: InstallOptions): Installed {
  const names = new Set<string>();
  for (const f of features) {
    if (names.has(f.name)) throw new AppError('internal.bug', { problem: `feature ${f.name} is installed twice` });
    names.add(f.name);
  }
  const pipeline = new Pipeline(
    features.flatMap((f) => f.systems ?? []),
    opts.log,
  );
  for (const t of features.flatMap((f) => f.tools ?? [])) opts.tools.register(t);
  const commands: CommandRouter = new CommandRouter(
    [createHelpCommand(() => commands.list()), ...opts.own, ...features.flatMap((f) => f.commands ?? [])],
    opts.adminsManage,
  );
  return { pipeline, commands };
}
