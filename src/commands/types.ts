import type { Logger } from '../log.js';
import type { Session } from '../sessions/model.js';
import type { InboundMessage } from '../pipeline/turn.js';
import type { Services } from '../services.js';
import type { OutboundDocument } from '../channels/types.js';

export interface CommandContext {
  inbound: InboundMessage;
  session: Session;
  args: string;
  services: Services;
  log: Logger;
  /** Sends a file to the chat, on channels that can (Telegram); absent elsewhere. */
  document?: ((doc: OutboundDocument) => Promise<void>) | undefined;
}

/** A slash command, handled before the pipeline; returns the reply text. */
export interface Command {
  name: string;
  description: string;
  run(ctx: CommandContext): Promise<string>;
}
