import { AppError } from './errors.js';
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
 * A button under a reply (Telegram's inline keyboard), in rows. Pressing it sends `data` back as
 * if the person had typed it — a command such as `/why forget 1a2b3c4d 2` — so it meets the same
 * checks as a typed command (who may run it: dispatch/router.ts) and nothing new to trust.
 */
export interface ReplyButton {
  text: string;
  /** The command text it sends (at most 64 bytes: Telegram's limit). */
  data: string;
}

/**
 * What goes back to a chat. `text` is the reply — the answer, a command's result, a refusal or
 * an apology — and ends the answer's preview (it becomes this text); `aside` is a line that goes
 * out beside the answer without ending its preview (a voice note's transcript); `document` is a
 * file (`/export`), sent only where the way back declares `documents`.
 */
export type Outbound =
  | { kind: 'text'; text: string; buttons?: ReplyButton[][] | undefined }
  | { kind: 'aside'; text: string }
  | { kind: 'document'; document: OutboundDocument };

/**
 * The way back to the chat one message came from. What a channel can do beyond text is declared
 * here, not guessed: `documents` where files go out as files, `progress` where an answer is
 * shown as it grows (absent: it appears when done).
 */
export interface Reply {
  /** Resolves once the channel has sent it; rejects when it could not. */
  send(out: Outbound): Promise<void>;
  readonly documents: boolean;
  readonly progress?: AnswerProgress | undefined;
  /** Whether a text's `buttons` are shown (Telegram); elsewhere they are left out, and the text says what to type instead. */
  readonly buttons?: boolean | undefined;
  /** The channel's ids of the messages its texts went out as, where it knows them (Telegram): `/why` sent as a reply to one finds its answer. */
  readonly sent?: readonly string[] | undefined;
}

/**
 * The way back of a channel that sends text only (the terminal, tests): an aside is one more
 * line; no files, no preview.
 */
export function textReply(send: (text: string) => Promise<void>): Reply {
  return {
    documents: false,
    async send(out) {
      // Never asked: a command sends a file only where `documents` says it goes out as one.
      if (out.kind === 'document') throw new AppError('internal.bug', { problem: 'a file was sent through a channel that cannot send files' });
      await send(out.text);
    },
  };
}

export type InboundHandler = (msg: InboundMessage, reply: Reply) => HandleResult;

/** A transport users talk through. It knows its own limits (length, formatting, rate). */
export interface Channel {
  readonly name: string;
  start(onMessage: InboundHandler): Promise<void>;
  send(chatId: string, text: string): Promise<void>;
  /** Stop taking new messages. Replies of running turns may still be sent. */
  stop(): Promise<void>;
  /** The way back for a message recovered from the journal after a restart. */
  replyFor(msg: InboundMessage): Reply;
  /**
   * Several processes serve the bot: before `replyFor` of a message a process that died had begun
   * answering, takes over what it left shown of the answer (Telegram: a streamed placeholder).
   */
  takeOver?(msg: InboundMessage): Promise<void>;
  /** After recovery: tidies what the last run left half shown (Telegram: streaming placeholders). */
  settleInterrupted?(): Promise<number>;
  /** Whether the channel still serves a chat (a reminder is not sent to one it no longer does); without it, every chat. */
  serves?(chatId: string): Promise<boolean>;
  /** A line for the person at the terminal before the first message (the terminal chat's banner). */
  greet?(text: string): void;
  /** Resolves when the channel has nothing more to take and all it took is answered (piped input ended): the daemon stops. */
  readonly finished?: Promise<void>;
}
