/**
 * Outbound messages: split → render → sendMessage, in order, each chunk delivered exactly once.
 *
 * Telegram has no idempotency key for sendMessage and a bot cannot read a chat back, so a
 * duplicate can only be prevented by never repeating a request that may already have been
 * carried out. A chunk is therefore re-sent only when the failure proves Telegram did not take
 * it (429 after its retry_after, a 5xx answer, a connection that was never made). A timeout or
 * a connection cut after the request went out is "uncertain": it is logged with the code
 * `telegram.delivery_uncertain` and counted as delivered — nearly always it was — and the next
 * chunk goes on. The patience for one request (`sendTimeoutMs`, default 60 s) is far above
 * Telegram's usual answer time, so that case means a real network fault, not a slow server.
 *
 * If Telegram rejects the HTML (400 "can't parse entities"), that chunk is sent again as the
 * plain Markdown text: the 400 proves the first attempt was not delivered.
 */
import type { Telegram } from 'telegraf';
import { scrubSecrets, type Logger } from '../../core/log.js';
import { withDefaults } from '../../core/defaults.js';
import { withRetry } from '../../core/retry.js';
import { classifyTelegramFailure, describeError, isFormattingRejected, isNotModified, isTelegramError, toTelegramAppError } from './errors.js';
import { renderTelegramHtml, visibleLength } from './render.js';
import type { OutboundDocument, ReplyButton } from '../../core/channel.js';
import { splitMessage, TELEGRAM_MESSAGE_LIMIT } from './split.js';

/** Patience and pace; production defaults in DELIVERY_DEFAULTS, tests make them short. */
export interface DeliveryTuning {
  /** How long one sendMessage may take before it is given up as uncertain (ms). */
  sendTimeoutMs: number;
  /** Retries of one chunk after failures that prove it was not delivered. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A 429 asking for a longer wait than this fails the chunk instead (ms). */
  maxRetryAfterMs: number;
  /** Timeout of a cosmetic call (chat action) (ms). */
  cosmeticTimeoutMs: number;
  chunkLimit: number;
}

export const DELIVERY_DEFAULTS: DeliveryTuning = {
  sendTimeoutMs: 60_000,
  retries: 5,
  baseDelayMs: 500,
  maxDelayMs: 15_000,
  maxRetryAfterMs: 120_000,
  cosmeticTimeoutMs: 10_000,
  chunkLimit: TELEGRAM_MESSAGE_LIMIT,
};

export interface DeliveryOptions {
  telegram: Telegram;
  log: Logger;
  /** Fields left out (or undefined) keep DELIVERY_DEFAULTS. */
  tuning?: Partial<DeliveryTuning> | undefined;
}

export interface SendOptions {
  /** Answer this message (groups: makes clear whom the bot answers). Only the first chunk. */
  replyTo?: number | undefined;
  /** Forum topic to post in (every chunk). */
  threadId?: number | undefined;
  /** An inline keyboard under the last chunk (a button sends its `data` back: channel.ts). */
  buttons?: ReplyButton[][] | undefined;
}

export interface DeliveryReport {
  /** The ids of the messages sent (those Telegram answered with one), in order: what /why maps a reply back by. */
  messageIds: number[];
  chunks: number;
  sent: number;
  uncertain: number;
  plainFallbacks: number;
}

type SendPayload = { text: string; parse_mode?: 'HTML'; reply_markup?: object };

/** Telegram's inline keyboard for `buttons`. */
function keyboard(buttons: ReplyButton[][]): object {
  return { inline_keyboard: buttons.map((row) => row.map((b) => ({ text: b.text, callback_data: b.data }))) };
}

/**
 * A chunk of Markdown as Telegram HTML, or as it was when the HTML would show nothing (Telegram
 * refuses an empty message): what sending and the final edit of a streamed answer both post.
 */
function renderedPayload(chunk: string): SendPayload {
  const html = renderTelegramHtml(chunk);
  return visibleLength(html.replace(/\s+/g, '')) === 0 ? { text: chunk } : { text: html, parse_mode: 'HTML' };
}

export class Delivery {
  private readonly tg: Telegram;
  private readonly log: Logger;
  private cosmeticFailures = 0;
  private reactionFailures = 0;

  private readonly tuning: DeliveryTuning;

  constructor(opts: DeliveryOptions) {
    this.tg = opts.telegram;
    this.log = opts.log;
    this.tuning = withDefaults(DELIVERY_DEFAULTS, opts.tuning);
  }

  /** The retry policy of a send or an edit (one for both, so they cannot drift apart). */
  private backoff(): { retries: number; baseDelayMs: number; maxDelayMs: number; maxRetryAfterMs: number } {
    const { retries, baseDelayMs, maxDelayMs, maxRetryAfterMs } = this.tuning;
    return { retries, baseDelayMs, maxDelayMs, maxRetryAfterMs };
  }

  /** Sends the model's Markdown as one or more HTML messages, in order. */
  async sendMarkdown(chatId: string, markdown: string, options: SendOptions = {}): Promise<DeliveryReport> {
    // Every reply gets the log's secret scrubbing: a key echoed by a proxy never reaches a chat.
    const chunks = splitMessage(scrubSecrets(markdown), this.tuning.chunkLimit);
    const report: DeliveryReport = { messageIds: [], chunks: chunks.length, sent: 0, uncertain: 0, plainFallbacks: 0 };
    let replyTo = options.replyTo;
    for (const [i, chunk] of chunks.entries()) {
      const markup = options.buttons && i === chunks.length - 1 ? keyboard(options.buttons) : undefined;
      await this.sendRendered(chatId, chunk, replyTo, options.threadId, report, markup);
      replyTo = undefined;
    }
    return report;
  }

  /** One chunk of Markdown as HTML (plain text when Telegram refuses the formatting). */
  private async sendRendered(
    chatId: string,
    chunk: string,
    replyTo: number | undefined,
    threadId: number | undefined,
    report: DeliveryReport,
    markup?: object,
  ): Promise<void> {
    const payload = { ...renderedPayload(chunk), ...(markup ? { reply_markup: markup } : {}) };
    let outcome: 'sent' | 'uncertain';
    if (!payload.parse_mode) {
      outcome = await this.sendChunk(chatId, payload, replyTo, threadId, report.messageIds);
    } else {
      try {
        outcome = await this.sendChunk(chatId, payload, replyTo, threadId, report.messageIds);
      } catch (err) {
        if (!isFormattingRejected(err)) throw toTelegramAppError(err, 'sendMessage');
        this.log.warn(
          { chatId, description: (err as { description?: string }).description },
          'Telegram rejected the formatting; sending this part as plain text',
        );
        report.plainFallbacks++;
        outcome = await this.sendChunkOrThrow(chatId, { text: chunk, ...(markup ? { reply_markup: markup } : {}) }, replyTo, threadId, report.messageIds);
      }
    }
    if (outcome === 'sent') report.sent++;
    else report.uncertain++;
  }

  /**
   * The finished answer into a message already in the chat (a streaming placeholder): its first
   * part replaces the placeholder's text, further parts follow as new messages. An edit may be
   * repeated safely (the same text twice is still one message), so it is retried after any
   * failure, 429s after their retry_after. False when the placeholder cannot be edited (deleted
   * by the user, too old): nothing of the answer is shown yet, and the caller sends it anew.
   */
  async finishInPlace(chatId: string, messageId: number, markdown: string, options: SendOptions = {}, ids: number[] = []): Promise<boolean> {
    const [first = '', ...rest] = splitMessage(scrubSecrets(markdown), this.tuning.chunkLimit);
    const edit = (payload: SendPayload) =>
      withRetry(() => this.call('editMessageText', { chat_id: chatId, message_id: messageId, ...payload }, this.tuning.sendTimeoutMs), {
        ...this.backoff(),
        classify: (err) => (isNotModified(err) ? { retry: false } : classifyTelegramFailure(err, true)),
        onRetry: ({ attempt, delayMs, err }) => this.log.warn({ chatId, attempt, delayMs, err: describeError(err) }, 'editMessageText failed; retrying'),
      }).catch((err: unknown) => {
        if (!isNotModified(err)) throw err;
      });
    try {
      try {
        await edit(renderedPayload(first));
      } catch (err) {
        if (!isFormattingRejected(err)) throw err;
        this.log.warn({ chatId }, 'Telegram rejected the formatting; the answer goes in as plain text');
        await edit({ text: first });
      }
    } catch (err) {
      if (isTelegramError(err) && err.code !== 429 && err.code < 500) {
        this.log.warn({ chatId, err: describeError(err) }, 'the placeholder could not be edited; sending the answer as a new message');
        return false;
      }
      // Retries of an idempotent call ran out without a clear answer: it may well be shown.
      this.log.warn(
        { code: 'telegram.delivery_uncertain', chatId, err: describeError(err) },
        'the final edit may or may not have reached Telegram; not sent again as a new message',
      );
    }
    const report: DeliveryReport = { messageIds: [messageId], chunks: rest.length, sent: 0, uncertain: 0, plainFallbacks: 0 };
    for (const chunk of rest) await this.sendRendered(chatId, chunk, undefined, options.threadId, report);
    ids.push(...report.messageIds);
    return true;
  }

  /** One call of a streaming preview (draft, placeholder, interim edit): one attempt, cosmetic timeout. */
  async previewCall(method: 'sendMessageDraft' | 'sendMessage' | 'editMessageText', body: object): Promise<unknown> {
    return this.call(method, body, this.tuning.cosmeticTimeoutMs);
  }

  /** A user's status in a chat (getChatMember: creator, administrator, member, …): one attempt, cosmetic timeout; throws on failure. */
  async memberStatus(chatId: string, userId: string): Promise<string> {
    const member = (await this.call('getChatMember', { chat_id: chatId, user_id: Number(userId) }, this.tuning.cosmeticTimeoutMs)) as { status?: unknown };
    return String(member?.status);
  }

  /** Sends text exactly as given, without formatting (notices, pairing codes). */
  async sendPlain(chatId: string, text: string, options: SendOptions = {}): Promise<DeliveryReport> {
    const chunks = splitMessage(scrubSecrets(text), this.tuning.chunkLimit);
    const report: DeliveryReport = { messageIds: [], chunks: chunks.length, sent: 0, uncertain: 0, plainFallbacks: 0 };
    let replyTo = options.replyTo;
    for (const chunk of chunks) {
      if ((await this.sendChunkOrThrow(chatId, { text: chunk }, replyTo, options.threadId)) === 'sent') report.sent++;
      else report.uncertain++;
      replyTo = undefined;
    }
    return report;
  }

  /** A chat action ("typing…"). Cosmetic: a failure is logged and ignored, never retried. */
  async chatAction(chatId: string, action: 'typing' = 'typing', threadId?: number): Promise<void> {
    try {
      const body = { chat_id: chatId, ...(threadId !== undefined ? { message_thread_id: threadId } : {}), action };
      await this.call('sendChatAction', body, this.tuning.cosmeticTimeoutMs);
    } catch (err) {
      // Logged loudly once, then quietly: an API server without chat actions would flood the log.
      const level = this.cosmeticFailures++ === 0 ? 'warn' : 'debug';
      this.log[level]({ chatId, err: describeError(err) }, 'sendChatAction failed (cosmetic, ignored)');
    }
  }

  /**
   * A reaction on a message (the group "seen" mark). Cosmetic like chat actions: one attempt,
   * a failure (an emoji Telegram does not allow, reactions off in the chat) logged and ignored.
   */
  async react(chatId: string, messageId: number, emoji: string): Promise<void> {
    try {
      const body = { chat_id: chatId, message_id: messageId, reaction: [{ type: 'emoji', emoji }] };
      await this.call('setMessageReaction', body, this.tuning.cosmeticTimeoutMs);
    } catch (err) {
      const level = this.reactionFailures++ === 0 ? 'warn' : 'debug';
      this.log[level]({ chatId, err: describeError(err) }, 'setMessageReaction failed (cosmetic, ignored)');
    }
  }

  private async sendChunkOrThrow(
    chatId: string,
    payload: SendPayload,
    replyTo: number | undefined,
    threadId?: number,
    ids?: number[],
  ): Promise<'sent' | 'uncertain'> {
    try {
      return await this.sendChunk(chatId, payload, replyTo, threadId, ids);
    } catch (err) {
      throw toTelegramAppError(err, 'sendMessage');
    }
  }

  /** One message: retried only while each failure proves it was not delivered. */
  private async sendChunk(chatId: string, payload: SendPayload, replyTo: number | undefined, threadId?: number, ids?: number[]): Promise<'sent' | 'uncertain'> {
    const body = {
      chat_id: chatId,
      ...(threadId !== undefined ? { message_thread_id: threadId } : {}),
      ...payload,
      ...(replyTo !== undefined ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } } : {}),
    };
    try {
      const sent = (await withRetry(() => this.call('sendMessage', body, this.tuning.sendTimeoutMs), {
        ...this.backoff(),
        classify: (err) => classifyTelegramFailure(err, false),
        onRetry: ({ attempt, delayMs, err }) =>
          this.log.warn({ chatId, attempt, delayMs, err: describeError(err) }, 'sendMessage failed before delivery; retrying'),
      })) as { message_id?: unknown } | undefined;
      if (typeof sent?.message_id === 'number') ids?.push(sent.message_id);
      return 'sent';
    } catch (err) {
      if (!classifyTelegramFailure(err, false).uncertain) throw err;
      this.log.warn(
        { code: 'telegram.delivery_uncertain', chatId, chars: payload.text.length, err: describeError(err) },
        'sendMessage may or may not have reached Telegram; not re-sent, so it cannot arrive twice',
      );
      return 'uncertain';
    }
  }

  /**
   * Sends a file (`/export`). One attempt: an upload cut off midway may still arrive, and a
   * second copy of a file is worse than an apology asking to run the command again.
   */
  async sendDocument(chatId: string, doc: OutboundDocument, options: SendOptions = {}): Promise<void> {
    await this.tg.sendDocument(
      chatId,
      { source: doc.content, filename: doc.filename },
      {
        ...(doc.caption ? { caption: doc.caption } : {}),
        ...(options.threadId !== undefined ? { message_thread_id: options.threadId } : {}),
        ...(options.replyTo !== undefined ? { reply_parameters: { message_id: options.replyTo, allow_sending_without_reply: true } } : {}),
      },
    );
  }

  private async call(
    method: 'sendMessage' | 'sendChatAction' | 'setMessageReaction' | 'sendMessageDraft' | 'editMessageText' | 'getChatMember',
    payload: object,
    timeoutMs: number,
  ): Promise<unknown> {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), timeoutMs);
    try {
      // telegraf types its signal with the abort-controller polyfill; the native one works. Its
      // method list predates sendMessageDraft; callApi posts any method name as it is.
      return await this.tg.callApi(method as 'sendMessage', payload as never, { signal: ac.signal as never });
    } finally {
      clearTimeout(timer);
    }
  }
}
