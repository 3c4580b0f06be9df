import type { InboundMessage } from '../pipeline/turn.js';

export type InboundHandler = (msg: InboundMessage, reply: (text: string) => Promise<void>) => Promise<void>;

/** A transport users talk through. It knows its own limits (length, formatting, rate). */
export interface Channel {
  readonly name: string;
  start(onMessage: InboundHandler): Promise<void>;
  send(chatId: string, text: string): Promise<void>;
  /** Stop taking new messages. Replies of running turns may still be sent. */
  stop(): Promise<void>;
}
