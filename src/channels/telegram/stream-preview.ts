/**
 * The answer shown while it is written (STREAMING=draft|edit), one StreamPreview per turn.
 *
 * draft (private chats): the growing text goes out with sendMessageDraft, an ephemeral preview
 *   that is not a message; the finished answer is then sent once with sendMessage, formatted
 *   (Delivery.sendMarkdown, exactly as without streaming). A server that answers the method
 *   with an error (an older Bot API server: 404; a bot without drafts: 400) is remembered for
 *   the rest of the run (per bot), and this and later turns use edit.
 * edit (groups, or no drafts): a placeholder message with the text so far, edited at most once
 *   per EDIT interval per chat (1.5 s), a 429 pausing that chat's edits for its retry_after;
 *   the final edit carries the formatted answer, parts past 4096 characters follow as new
 *   messages. The placeholder is recorded on disk (placeholders.ts) so that a restart finishes
 *   it instead of leaving a fragment beside a second answer.
 *
 * Nothing is shown until the first text has waited `firstShowMs` (250 ms): a short answer
 * then arrives whole, as one message, with no placeholder or draft at all. Preview calls are
 * cosmetic: a failure is logged and the answer is still delivered; only the final
 * sendMessage / final edit follows the delivery rules (delivery.ts).
 */
import { randomInt } from 'node:crypto';
import { AppError } from '../../core/errors.js';
import { scrubSecrets, trimSecretTail, type Logger } from '../../core/log.js';
import type { AnswerProgress } from '../../core/channel.js';
import type { Delivery, SendOptions } from './delivery.js';
import { classifyTelegramFailure, describeError, isNotModified } from './errors.js';
import type { Placeholder, Placeholders } from './placeholders.js';
import { withDefaults } from '../../core/defaults.js';
import { sleep } from '../../core/retry.js';
import { renderTelegramHtml, visibleText } from './render.js';

export type StreamingMode = 'off' | 'draft' | 'edit';

export interface StreamTuning {
  /** Time the first text waits before it is shown (a short answer arrives whole instead). */
  firstShowMs: number;
  /** Least time between two drafts of one answer. */
  draftIntervalMs: number;
  /** Least time between two edits in one chat. */
  editIntervalMs: number;
}

export const STREAM_TUNING: StreamTuning = { firstShowMs: 250, draftIntervalMs: 400, editIntervalMs: 1500 };

const PREVIEW_LIMIT = 4096;
export const RESTARTED_TEXT = '⚠️ The bot restarted before this answer was finished. Send your message again if you still need it.';

/** One per bot: what its server showed it can do, and when each chat may be edited next. */
export class StreamState {
  draftsUnavailable = false;
  private readonly nextEdit = new Map<string, number>();

  readonly tuning: StreamTuning;

  /** `tuning`: fields left out (or undefined) keep STREAM_TUNING. */
  constructor(
    readonly mode: StreamingMode,
    tuning: Partial<StreamTuning> | undefined,
    readonly placeholders: Placeholders,
    readonly delivery: Delivery,
    readonly log: Logger,
  ) {
    this.tuning = withDefaults(STREAM_TUNING, tuning);
  }

  nextEditAt(chatId: string): number {
    return this.nextEdit.get(chatId) ?? 0;
  }

  /** An edit (or the placeholder) went out now: the next waits a full interval; a 429 waits longer. */
  edited(chatId: string, waitMs = this.tuning.editIntervalMs): void {
    const now = Date.now();
    if (this.nextEdit.size > 1000) for (const [k, t] of this.nextEdit) if (t < now) this.nextEdit.delete(k);
    this.nextEdit.set(chatId, Math.max(this.nextEditAt(chatId), now + waitMs));
  }

  draftsRefused(err: unknown): void {
    if (this.draftsUnavailable) return;
    this.draftsUnavailable = true;
    this.log.warn({ err: describeError(err) }, 'sendMessageDraft refused by the Bot API server; streaming by editing a message instead');
  }
}

export interface PreviewTarget {
  chatId: string;
  threadId?: number | undefined;
  replyTo?: number | undefined;
  privateChat: boolean;
  /** Session chat id and inbound message id: the placeholder's record. */
  sessionChat: string;
  source: string | undefined;
}

export class StreamPreview implements AnswerProgress {
  private mode: 'draft' | 'edit' | 'none';
  private pending: string | undefined;
  private shown: string | undefined;
  private firstAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private open = false;
  private finished = false;
  private draftAt = 0;
  private placeholder: number | undefined;
  private readonly draftId = randomInt(1, 2 ** 31 - 1);

  constructor(
    private readonly state: StreamState,
    private readonly target: PreviewTarget,
    adopted?: Placeholder,
  ) {
    const drafts = state.mode === 'draft' && target.privateChat && !state.draftsUnavailable;
    this.mode = state.mode === 'off' ? 'none' : drafts && !adopted ? 'draft' : 'edit';
    this.placeholder = adopted?.messageId;
  }

  /** Calls made before the message is journaled wait; from here on they may show. */
  start(): void {
    this.open = true;
    this.schedule();
  }

  text(soFar: string): void {
    this.update(soFar);
  }

  status(line: string): void {
    this.update(line);
  }

  /** The turn ended without a reply (already answered): nothing more is shown. */
  close(): void {
    this.finished = true;
    clearTimeout(this.timer);
  }

  /**
   * The answer will not come (/stop before any text): a placeholder showing a status is edited
   * to `line`, so it does not say "searching memory…" for ever; a draft is ephemeral and simply
   * stops; nothing is sent when nothing was shown.
   */
  async end(line: string): Promise<void> {
    this.close();
    await this.inFlight;
    const id = this.placeholder;
    this.placeholder = undefined;
    this.mode = 'none';
    if (id === undefined) return;
    const { sessionChat, source, chatId } = this.target;
    this.state.edited(chatId);
    await this.state.delivery
      .previewCall('editMessageText', { chat_id: chatId, message_id: id, text: line })
      .catch((err: unknown) => this.state.log.warn({ chatId, err: describeError(err) }, "a stopped answer's placeholder could not be marked"));
    if (source !== undefined) await this.state.placeholders.remove(sessionChat, source);
  }

  /** Delivers the finished answer (or an apology): in the placeholder when there is one, else as new messages. */
  async finish(markdown: string, options: SendOptions, ids: number[] = []): Promise<void> {
    const delivery = this.state.delivery;
    this.close();
    await this.inFlight;
    const id = this.placeholder;
    this.placeholder = undefined;
    this.mode = 'none'; // a second reply on the same turn is a message of its own
    if (id === undefined) {
      ids.push(...(await delivery.sendMarkdown(this.target.chatId, markdown, options)).messageIds);
      return;
    }
    const { sessionChat, source, chatId } = this.target;
    // The final edit keeps the chat's pace too, and waits out a 429's retry_after.
    const wait = this.state.nextEditAt(chatId) - Date.now();
    if (wait > 0) await sleep(wait);
    if (source !== undefined) await this.state.placeholders.finishing(sessionChat, source);
    this.state.edited(chatId);
    const inPlace = await delivery.finishInPlace(chatId, id, markdown, options, ids);
    if (!inPlace) ids.push(...(await delivery.sendMarkdown(chatId, markdown, { ...options, replyTo: undefined })).messageIds);
    if (source !== undefined) await this.state.placeholders.remove(sessionChat, source);
  }

  private update(text: string): void {
    if (this.finished || this.mode === 'none' || !text.trim()) return;
    this.pending = text;
    this.firstAt ??= Date.now();
    this.schedule();
  }

  private schedule(): void {
    if (this.finished || !this.open || this.pending === undefined || this.inFlight || this.timer) return;
    const now = Date.now();
    const paced = this.mode === 'draft' ? this.draftAt : this.state.nextEditAt(this.target.chatId);
    const at = Math.max(this.firstAt! + this.state.tuning.firstShowMs, paced);
    if (at > now) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.schedule();
      }, at - now);
      this.timer.unref();
      return;
    }
    const text = previewText(this.pending);
    this.pending = undefined;
    if (text === this.shown) return;
    this.inFlight = this.push(text)
      .catch((err: unknown) => this.state.log.debug({ err: describeError(err) }, 'streaming preview failed (cosmetic, ignored)'))
      .finally(() => {
        this.inFlight = undefined;
        this.schedule();
      });
  }

  private async push(text: string): Promise<void> {
    const { delivery } = this.state;
    const { chatId, threadId } = this.target;
    const thread = threadId !== undefined ? { message_thread_id: threadId } : {};
    try {
      if (this.mode === 'draft') {
        await delivery.previewCall('sendMessageDraft', { chat_id: Number(chatId), ...thread, draft_id: this.draftId, text });
        this.draftAt = Date.now() + this.state.tuning.draftIntervalMs;
      } else if (this.placeholder === undefined) {
        const replyTo = this.target.replyTo;
        const reply = replyTo !== undefined ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } } : {};
        const sent = (await delivery.previewCall('sendMessage', { chat_id: chatId, ...thread, text, ...reply })) as { message_id?: number };
        this.state.edited(chatId);
        if (typeof sent?.message_id !== 'number') throw new AppError('telegram.bad_response', { what: 'sendMessage', detail: 'the answer has no message id' });
        this.placeholder = sent.message_id;
        const { sessionChat, source } = this.target;
        if (source !== undefined) await this.state.placeholders.add({ chat: sessionChat, source, chatId, messageId: sent.message_id, threadId });
      } else {
        this.state.edited(chatId);
        await delivery.previewCall('editMessageText', { chat_id: chatId, message_id: this.placeholder, text });
      }
      this.shown = text;
    } catch (err) {
      this.failed(err, text);
    }
  }

  private failed(err: unknown, text: string): void {
    if (isNotModified(err)) {
      this.shown = text;
      return;
    }
    const f = classifyTelegramFailure(err, true);
    const log = this.state.log;
    if (f.status === 429) {
      // Shown later, after the wait Telegram asked for; the newest text wins.
      const wait = f.retryAfterMs ?? 1000;
      if (this.mode === 'draft') this.draftAt = Date.now() + wait;
      else this.state.edited(this.target.chatId, wait);
      this.pending ??= text;
      log.info({ chatId: this.target.chatId, retryAfterMs: wait }, 'streaming preview rate-limited (429); pausing it as asked');
      return;
    }
    const refused = f.status !== undefined && f.status < 500;
    if (this.mode === 'draft' && refused) {
      this.state.draftsRefused(err);
      this.mode = 'edit';
      this.pending ??= text;
      return;
    }
    if (this.mode === 'edit' && refused) {
      // A placeholder that cannot be sent or edited (deleted, no rights): the answer comes whole.
      log.warn({ chatId: this.target.chatId, err: describeError(err) }, 'streaming placeholder refused; the answer will arrive as a new message');
      this.mode = 'none';
      if (this.placeholder !== undefined && this.target.source !== undefined) void this.state.placeholders.remove(this.target.sessionChat, this.target.source);
      this.placeholder = undefined;
      return;
    }
    if (this.mode === 'edit' && this.placeholder === undefined && f.uncertain) {
      // The placeholder may exist without us knowing its id: a second one would be a stray copy.
      this.mode = 'none';
    }
    log.debug({ chatId: this.target.chatId, err: describeError(err) }, 'streaming preview call failed (cosmetic, ignored)');
  }
}

/**
 * Plain text, secrets scrubbed like any reply (and the start of one still arriving cut off),
 * cut to what one message holds. Markdown that is
 * complete so far loses its markers (rendered, then the tags dropped); half-written markup
 * would make Telegram refuse HTML, so the preview never asks it to parse any.
 */
export function previewText(text: string): string {
  // Only the beginning is ever shown: the rest is not scrubbed and rendered again at every step.
  // The window is twice the limit, so a secret crossing the cut is scrubbed whole first.
  const html = renderTelegramHtml(trimSecretTail(scrubSecrets(text.slice(0, 2 * PREVIEW_LIMIT))).slice(0, PREVIEW_LIMIT + 1));
  const t = visibleText(html);
  return t.length > PREVIEW_LIMIT ? `${t.slice(0, PREVIEW_LIMIT - 1)}…` : t;
}

/** Tells each placeholder the last run left unfinished (and no recovered turn took) that the bot restarted. */
export async function settleLeftOver(state: StreamState): Promise<number> {
  const left = state.placeholders.leftOver();
  for (const p of left) {
    await state.delivery
      .previewCall('editMessageText', { chat_id: p.chatId, message_id: p.messageId, text: RESTARTED_TEXT })
      .catch((err: unknown) => state.log.warn({ chatId: p.chatId, err: describeError(err) }, 'an interrupted placeholder could not be marked'));
  }
  return left.length;
}
