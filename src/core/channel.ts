import type { InboundMessage } from './message.js';
import type { AnswerProgress } from './progress.js';

/** Resolves when the message is fully handled; `accepted` resolves once it is durably journaled. */
export type HandleResult = Promise<void> & { accepted?: Promise<unknown> };

/** A file sent to the chat (`/export`). */
export interface OutboundDocument {
  filename: string;
  content: Buffer;
  caption?: string;
}

export type { AnswerProgress } from './progress.js';

/**
 * The way back to the chat a message came from; `document` where the channel can send files,
 * `progress` where it can show an answer as it grows, `aside` where a line can go out before
 * the answer without ending its preview (a voice note's transcript; without it, the reply).
 */
export type ReplyFn = ((text: string) => Promise<void>) & {
  document?: (doc: OutboundDocument) => Promise<void>;
  progress?: AnswerProgress;
  aside?: (text: string) => Promise<void>;
};

export type InboundHandler = (msg: InboundMessage, reply: ReplyFn) => HandleResult;

/** A transport users talk through. It knows its own limits (length, formatting, rate). */
export interface Channel {
  readonly name: string;
  start(onMessage: InboundHandler): Promise<void>;
  send(chatId: string, text: string): Promise<void>;
  /** Stop taking new messages. Replies of running turns may still be sent. */
  stop(): Promise<void>;
  /** The way back for a message recovered from the journal after a restart (default: `send`). */
  replyFor?(msg: InboundMessage): ReplyFn;
  /** After recovery: tidies what the last run left half shown (Telegram: streaming placeholders). */
  settleInterrupted?(): Promise<number>;
  /** Whether the channel still serves a chat (a reminder is not sent to one it no longer does); without it, every chat. */
  serves?(chatId: string): Promise<boolean>;
  /** A line for the person at the terminal before the first message (the terminal chat's banner). */
  greet?(text: string): void;
  /** Resolves when the channel has nothing more to take and all it took is answered (piped input ended): the daemon stops. */
  readonly finished?: Promise<void>;
}
