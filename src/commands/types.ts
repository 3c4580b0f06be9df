import type { Logger } from '../core/log.js';
import type { Session } from '../sessions/model.js';
import type { SessionWriter } from '../sessions/writer.js';
import type { InboundMessage } from '../core/message.js';
import type { Services } from '../services/services.js';
import type { OutboundDocument } from '../core/channel.js';

export interface CommandContext {
  inbound: InboundMessage;
  session: Session;
  /** The command's writes to `session` (/new clears it, /compact compacts it). */
  writes: SessionWriter;
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
