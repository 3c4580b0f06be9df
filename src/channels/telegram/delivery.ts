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
import { scrubSecrets, type Logger } from '../../log.js';
import { withRetry } from '../../util/retry.js';
import { classifyTelegramFailure, describeError, isFormattingRejected, toTelegramAppError } from './errors.js';
import { renderTelegramHtml, visibleLength } from './render.js';
import type { OutboundDocument } from '../types.js';
import { splitMessage, TELEGRAM_MESSAGE_LIMIT } from './split.js';

export interface DeliveryOptions {
  telegram: Telegram;
  log: Logger;
  /** How long one sendMessage may take before it is given up as uncertain (ms). */
  sendTimeoutMs?: number;
  /** Retries of one chunk after failures that prove it was not delivered. */
  retries?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A 429 asking for a longer wait than this fails the chunk instead (ms). */
  maxRetryAfterMs?: number;
  /** Timeout of a cosmetic call (chat action) (ms). */
  cosmeticTimeoutMs?: number;
  chunkLimit?: number;
}

export interface SendOptions {
  /** Answer this message (groups: makes clear whom the bot answers). Only the first chunk. */
  replyTo?: number | undefined;
  /** Forum topic to post in (every chunk). */
  threadId?: number | undefined;
}

export interface DeliveryReport {
  chunks: number;
  sent: number;
  uncertain: number;
  plainFallbacks: number;
}

type SendPayload = { text: string; parse_mode?: 'HTML' };

export class Delivery {
  private readonly tg: Telegram;
  private readonly log: Logger;
  private cosmeticFailures = 0;
  private reactionFailures = 0;

  constructor(private readonly opts: DeliveryOptions) {
    this.tg = opts.telegram;
    this.log = opts.log;
  }

  /** Sends the model's Markdown as one or more HTML messages, in order. */
  async sendMarkdown(chatId: string, markdown: string, options: SendOptions = {}): Promise<DeliveryReport> {
    // Every reply gets the log's secret scrubbing: a key echoed by a proxy never reaches a chat.
    const chunks = splitMessage(scrubSecrets(markdown), this.opts.chunkLimit ?? TELEGRAM_MESSAGE_LIMIT);
    const report: DeliveryReport = { chunks: chunks.length, sent: 0, uncertain: 0, plainFallbacks: 0 };
    let replyTo = options.replyTo;
    for (const chunk of chunks) {
      const html = renderTelegramHtml(chunk);
      let outcome: 'sent' | 'uncertain';
      if (visibleLength(html.replace(/\s+/g, '')) === 0) {
        outcome = await this.sendChunk(chatId, { text: chunk }, replyTo, options.threadId);
      } else {
        try {
          outcome = await this.sendChunk(chatId, { text: html, parse_mode: 'HTML' }, replyTo, options.threadId);
        } catch (err) {
          if (!isFormattingRejected(err)) throw toTelegramAppError(err, 'sendMessage');
          this.log.warn({ chatId, description: (err as { description?: string }).description }, 'Telegram rejected the formatting; sending this part as plain text');
          report.plainFallbacks++;
          outcome = await this.sendChunkOrThrow(chatId, { text: chunk }, replyTo, options.threadId);
        }
      }
      if (outcome === 'sent') report.sent++;
      else report.uncertain++;
      replyTo = undefined;
    }
    return report;
  }

  /** Sends text exactly as given, without formatting (notices, pairing codes). */
  async sendPlain(chatId: string, text: string, options: SendOptions = {}): Promise<DeliveryReport> {
    const chunks = splitMessage(scrubSecrets(text), this.opts.chunkLimit ?? TELEGRAM_MESSAGE_LIMIT);
    const report: DeliveryReport = { chunks: chunks.length, sent: 0, uncertain: 0, plainFallbacks: 0 };
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
      await this.call('sendChatAction', body, this.opts.cosmeticTimeoutMs ?? 10_000);
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
      await this.call('setMessageReaction', body, this.opts.cosmeticTimeoutMs ?? 10_000);
    } catch (err) {
      const level = this.reactionFailures++ === 0 ? 'warn' : 'debug';
      this.log[level]({ chatId, err: describeError(err) }, 'setMessageReaction failed (cosmetic, ignored)');
    }
  }

  private async sendChunkOrThrow(chatId: string, payload: SendPayload, replyTo: number | undefined, threadId?: number): Promise<'sent' | 'uncertain'> {
    try {
      return await this.sendChunk(chatId, payload, replyTo, threadId);
    } catch (err) {
      throw toTelegramAppError(err, 'sendMessage');
    }
  }

  /** One message: retried only while each failure proves it was not delivered. */
  private async sendChunk(chatId: string, payload: SendPayload, replyTo: number | undefined, threadId?: number): Promise<'sent' | 'uncertain'> {
    const body = {
      chat_id: chatId,
      ...(threadId !== undefined ? { message_thread_id: threadId } : {}),
      ...payload,
      ...(replyTo !== undefined ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } } : {}),
    };
    try {
      await withRetry(() => this.call('sendMessage', body, this.opts.sendTimeoutMs ?? 60_000), {
        retries: this.opts.retries ?? 5,
        baseDelayMs: this.opts.baseDelayMs ?? 500,
        maxDelayMs: this.opts.maxDelayMs ?? 15_000,
        maxRetryAfterMs: this.opts.maxRetryAfterMs ?? 120_000,
        classify: (err) => classifyTelegramFailure(err, false),
        onRetry: ({ attempt, delayMs, err }) =>
          this.log.warn({ chatId, attempt, delayMs, err: describeError(err) }, 'sendMessage failed before delivery; retrying'),
      });
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
    await this.tg.sendDocument(chatId, { source: doc.content, filename: doc.filename }, {
      ...(doc.caption ? { caption: doc.caption } : {}),
      ...(options.threadId !== undefined ? { message_thread_id: options.threadId } : {}),
      ...(options.replyTo !== undefined ? { reply_parameters: { message_id: options.replyTo, allow_sending_without_reply: true } } : {}),
    });
  }

  private async call(method: 'sendMessage' | 'sendChatAction' | 'setMessageReaction', payload: object, timeoutMs: number): Promise<unknown> {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), timeoutMs);
    try {
      // telegraf types its signal with the abort-controller polyfill; the native one works.
      return await this.tg.callApi(method, payload as never, { signal: ac.signal as never });
    } finally {
      clearTimeout(timer);
    }
  }
}
