import type { InboundMessage } from '../pipeline/turn.js';

/** Resolves when the message is fully handled; `accepted` resolves once it is durably journaled. */
export type HandleResult = Promise<void> & { accepted?: Promise<unknown> };

export type InboundHandler = (msg: InboundMessage, reply: (text: string) => Promise<void>) => HandleResult;

/** A transport users talk through. It knows its own limits (length, formatting, rate). */
export interface Channel {
  readonly name: string;
  start(onMessage: InboundHandler): Promise<void>;
  send(chatId: string, text: string): Promise<void>;
  /** Stop taking new messages. Replies of running turns may still be sent. */
  stop(): Promise<void>;
}
