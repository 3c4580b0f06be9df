import type { Logger } from '../log.js';
import type { Session } from '../sessions/model.js';
import type { InboundMessage } from '../pipeline/turn.js';
import type { Services } from '../services.js';

export interface CommandContext {
  inbound: InboundMessage;
  session: Session;
  args: string;
  services: Services;
  log: Logger;
}

/** A slash command, handled before the pipeline; returns the reply text. */
export interface Command {
  name: string;
  description: string;
  run(ctx: CommandContext): Promise<string>;
}
