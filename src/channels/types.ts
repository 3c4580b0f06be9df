import type { InboundMessage } from '../pipeline/turn.js';

/** Resolves when the message is fully handled; `accepted` resolves once it is durably journaled. */
export type HandleResult = Promise<void> & { accepted?: Promise<unknown> };

/** A file sent to the chat (`/export`). */
export interface OutboundDocument {
  filename: string;
  content: Buffer;
  caption?: string;
}

/** The way back to the chat a message came from; `document` where the channel can send files. */
export type ReplyFn = ((text: string) => Promise<void>) & { document?: (doc: OutboundDocument) => Promise<void> };

export type InboundHandler = (msg: InboundMessage, reply: ReplyFn) => HandleResult;

/** A transport users talk through. It knows its own limits (length, formatting, rate). */
export interface Channel {
  readonly name: string;
  start(onMessage: InboundHandler): Promise<void>;
  send(chatId: string, text: string): Promise<void>;
  /** Stop taking new messages. Replies of running turns may still be sent. */
  stop(): Promise<void>;
}
