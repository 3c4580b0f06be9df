/**
 * The Telegram channel (session `telegram:{chatId}`, or `telegram:{chatId}:{threadId}` in a
 * forum topic: topics.ts), built on telegraf's Bot API client.
 *
 * Inbound, per update, in update order:
 *   update log (taken at most once, on disk first) → readUpdate (text / media / ignore)
 *   → access control (strangers stop here; in a group the bot does not serve, group-gate.ts) → the sender's role (roles.ts) → typing indicator → `onMessage` (app.handle),
 *   which queues the message behind earlier ones of the same chat and runs the turn.
 * The channel only translates: a voice note, a photo, a sticker become an InboundMessage that
 * describes them, handed over at once; whether they are read, refused, downloaded or
 * transcribed is the intake's and the turn's to decide, under the limits every message meets.
 * Updates are handed over one after another without waiting for turns, so chats run side by
 * side while each chat keeps its order (the dispatcher's per-chat queue).
 *
 * Outbound: Delivery (split ≤ 4096, Markdown → HTML, plain-text fallback, retries that can
 * never duplicate a message), streaming previews (stream-preview.ts), "typing…" (typing.ts).
 * Transport (transport.ts): long polling with a watchdog (default) or a webhook when
 * TELEGRAM_WEBHOOK_URL is set.
 */
import { Telegraf } from 'telegraf';
import type { Update } from 'telegraf/types';
import type { TelegramConfig } from './settings.js';
import type { StreamingMode } from '../../config/env.js';
import type { Logger } from '../../core/log.js';
import type { InboundMessage } from '../../core/message.js';
import type { Channel, InboundHandler, Reply } from '../../core/channel.js';
import type { Sender } from './access.js';
import { AccessControl } from './access.js';
import { Delivery } from './delivery.js';
import { readUpdate, type BotIdentity, type Inbound } from './inbound.js';
import type { PairingStore } from './pairing.js';
import { parseSessionChatId, sessionChatId } from './topics.js';
import { downloadFile } from './media.js';
import { imagePlaceholder, unreadablePlaceholder, type MediaFetchers } from '../../media/attachments.js';
import { audioPlaceholder } from '../../media/audio.js';
import { albumItemText } from './photos.js';
import { withQuote } from './reply-context.js';
import type { UpdateLog } from './update-log.js';
import { telegramStateInFiles, type TelegramState } from './state.js';
import type { Placeholder } from './placeholders.js';
import { settleLeftOver, StreamPreview, StreamState, type StreamTuning } from './stream-preview.js';
import { identify, registerCommands } from './startup.js';
import { createTransport, type Transport } from './transport.js';
import type { PollerOptions } from './polling.js';
import { TypingIndicator } from './typing.js';
import { replyThrough } from './reply.js';
import { AddressedAlbums } from './album-groups.js';
import { chatLabelOf } from './chat-label.js';
import { ChatRoles } from './roles.js';
import { GroupGate } from './group-gate.js';
import { isStop, parseCommand } from '../../core/command-line.js';
import { LRUCache } from 'lru-cache';

/** Knobs with production defaults; tests make them short. */
export interface TelegramTuning {
  pollTimeoutSec: number;
  emptyPollDelayMs: number;
  watchdogIntervalMs: number;
  stallAfterMs: number;
  typingIntervalMs: number;
  sendTimeoutMs: number;
  sendRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
  /** Streaming preview pace (stream-preview.ts); fields left out keep its defaults. */
  stream: Partial<StreamTuning>;
}

export interface TelegramChannelOptions {
  telegram: TelegramConfig & { botToken: string };
  workspaceDir: string;
  log: Logger;
  /** Registered with setMyCommands at start (with /start added). */
  commands?: Array<{ name: string; description: string }>;
  tuning?: Partial<TelegramTuning>;
  /** The app's downloaders: this channel registers its own, so turns fetch photos and voice notes by file id. */
  media?: MediaFetchers | undefined;
  /** Polling gave up for good (Telegram refused the token while running). */
  onFatal?: (err: unknown) => void;
  /**
   * The messages the last run accepted and did not finish: a group album among them was
   * addressed to the bot, so its pictures still arriving count as addressed (album-groups.ts).
   */
  unfinished?: InboundMessage[] | undefined;
  /** MEMORY_SCOPE=global: no group is approved with /allow (group-gate.ts). */
  sharedMemory?: boolean | undefined;
  /** STREAMING (default draft). */
  streaming?: StreamingMode | undefined;
  /** GROUP_ADMINS_MANAGE: a group's admins get the `admin` role for commands (roles.ts). */
  groupAdminsManage?: boolean | undefined;
  /** Where the channel keeps its state (state.ts: the app's choice); by default the workspace's `telegram/` folder. */
  state?: TelegramState | undefined;
  /** Several processes of one bot: polling waits for the polling lease (cluster/gates.ts). Unset: polls. */
  pollGate?: PollerOptions['gate'];
}

export class TelegramChannel implements Channel {
  readonly name = 'telegram';
  readonly bot: Telegraf;
  readonly delivery: Delivery;
  readonly updateLog: UpdateLog;
  readonly pairing: PairingStore;
  private readonly access: AccessControl;
  private readonly roles: ChatRoles;
  private readonly groups: GroupGate;
  private readonly log: Logger;
  private readonly stream: StreamState;
  private readonly typing: TypingIndicator;
  private readonly addressedAlbums = new AddressedAlbums();
  /** Private chats' @usernames seen on messages (serves(): users listed by handle). */
  private readonly usernames = new LRUCache<string, string>({ max: 10_000 });
  private transport: Transport | undefined;
  private onMessage: InboundHandler | undefined;
  private identity: BotIdentity | undefined;
  private accepting = false;
  /** Replies sent directly by the channel (to strangers: pairing, refusals), for a clean stop. */
  private readonly sideReplies = new Set<Promise<unknown>>();

  constructor(private readonly opts: TelegramChannelOptions) {
    this.log = opts.log;
    const apiRoot = opts.telegram.apiRoot ? opts.telegram.apiRoot.replace(/\/*$/, '/') : undefined;
    this.bot = new Telegraf(opts.telegram.botToken, { telegram: { webhookReply: false, ...(apiRoot ? { apiRoot } : {}) } });
    const t = opts.tuning ?? {};
    this.delivery = new Delivery({ telegram: this.bot.telegram, log: this.log, tuning: { ...t, retries: t.sendRetries } });
    this.typing = new TypingIndicator(this.delivery, t.typingIntervalMs);
    const state = opts.state ?? telegramStateInFiles(opts.workspaceDir, this.log);
    this.updateLog = state.updateLog;
    this.pairing = state.pairing;
    opts.media?.register(this.name, (fileId, maxBytes, signal) => downloadFile(this.bot.telegram, fileId, maxBytes, 60_000, signal));
    this.stream = new StreamState(opts.streaming ?? 'draft', t.stream, state.placeholders, this.delivery, this.log);
    this.access = new AccessControl({
      dmPolicy: opts.telegram.dmPolicy,
      allowedUsers: opts.telegram.allowedUsers,
      allowedGroups: opts.telegram.allowedGroups,
      pairing: this.pairing,
      sharedMemory: opts.sharedMemory,
      log: this.log,
    });
    this.groups = new GroupGate({ access: this.access, pairing: this.pairing, sharedMemory: opts.sharedMemory ?? false, log: this.log });
    this.roles = new ChatRoles({
      adminsManage: opts.groupAdminsManage ?? false,
      isOwner: (s) => this.access.isOwner(s),
      memberStatus: (chatId, userId) => this.delivery.memberStatus(chatId, userId),
      log: this.log,
    });
    // A kill between a group album's addressed item and its other pictures: they still count.
    for (const m of opts.unfinished ?? []) {
      const to = parseSessionChatId(m.chatId);
      if (m.channel === this.name && m.albumId && to.chatId.startsWith('-')) this.addressedAlbums.add(to.chatId, m.albumId);
    }
  }

  /** The bot's own account (after start). */
  get me(): BotIdentity | undefined {
    return this.identity;
  }

  async start(onMessage: InboundHandler): Promise<void> {
    this.onMessage = onMessage;
    await this.updateLog.load();
    await this.stream.placeholders.load();
    const me = await identify(this.bot, this.opts.tuning?.baseDelayMs);
    this.identity = me;
    await registerCommands(this.bot, this.opts.commands ?? [], this.log);
    this.accepting = true;
    this.transport = createTransport({
      telegram: this.bot.telegram,
      config: this.opts.telegram,
      log: this.log,
      onUpdates: (u) => this.ingest(u),
      onFatal: this.opts.onFatal,
      tuning: this.opts.tuning,
      pollGate: this.opts.pollGate,
    });
    await this.transport.start(`@${me.username}`);
  }

  /** How often the watchdog restarted polling. */
  get pollingRestarts(): number {
    return this.transport?.restarts ?? 0;
  }

  /** `chatId` is the session's chat id (a forum topic's includes its thread id). */
  async send(chatId: string, text: string): Promise<void> {
    const to = parseSessionChatId(chatId);
    await this.delivery.sendMarkdown(to.chatId, text, { threadId: to.threadId });
  }

  /**
   * Whether the bot still serves this session's chat (a forum topic: its group), by the access
   * rules a message would meet now. For a user listed by @username only, the handle is the one
   * seen on their messages since the start, else Telegram's (getChat); when neither is known
   * the chat counts as served (it was when the reminder was set).
   */
  async serves(chatId: string): Promise<boolean> {
    const to = parseSessionChatId(chatId).chatId;
    if (await this.access.serves(to)) return true;
    if (to.startsWith('-') || !this.access.listsUsernames) return false;
    let username = this.usernames.get(to);
    if (username === undefined) {
      const chat = (await this.bot.telegram.getChat(to).catch(() => undefined)) as { username?: string } | undefined;
      if (!chat) return true;
      username = chat.username ?? '';
      this.usernames.set(to, username);
    }
    return this.access.serves(to, username || undefined);
  }

  /**
   * The way back for a message the last run accepted and did not finish (journal recovery):
   * streamed like a live one, and finishing in place the placeholder that run left for it.
   */
  replyFor(msg: InboundMessage): Reply {
    const to = parseSessionChatId(msg.chatId);
    const adopted = this.stream.placeholders.take(msg.chatId, msg.messageId);
    const preview = this.preview(to.chatId, to.threadId, undefined, !to.chatId.startsWith('-'), msg, adopted);
    preview?.start();
    return replyThrough(this.delivery, to.chatId, { threadId: to.threadId }, preview);
  }

  /** Before `replyFor` of a message a process that died began answering: its placeholder is finished in place. */
  async takeOver(msg: InboundMessage): Promise<void> {
    if (this.stream.mode === 'off' || msg.messageId === undefined) return;
    await this.stream.placeholders.adopt(msg.chatId, msg.messageId);
  }

  /** After recovery: placeholders of the last run that no recovered turn took say the bot restarted. */
  async settleInterrupted(): Promise<number> {
    return settleLeftOver(this.stream);
  }

  private preview(
    chatId: string,
    threadId: number | undefined,
    replyTo: number | undefined,
    privateChat: boolean,
    msg: InboundMessage,
    adopted?: Placeholder,
  ): StreamPreview | undefined {
    if (this.stream.mode === 'off') return undefined;
    return new StreamPreview(this.stream, { chatId, threadId, replyTo, privateChat, sessionChat: msg.chatId, source: msg.messageId }, adopted);
  }

  /**
   * Stops taking updates: the poll in flight is aborted (or the webhook server closed) and
   * every update already taken has been handed to `onMessage` when this resolves. Replies of
   * running turns still go out (the client stays usable) while the app drains.
   */
  async stop(): Promise<void> {
    this.accepting = false;
    await this.transport?.stop();
    await Promise.allSettled([...this.sideReplies]);
  }

  /**
   * Takes a batch of updates: routes the new ones in order — each is in the app's inbox journal
   * when its route resolves — and only then records their ids. A kill in between leaves the ids
   * unrecorded and the offset unconfirmed: Telegram sends them again, and the app recognises a
   * message it already has by its message id. A kill before the journal write loses nothing
   * either, for the same reason. So a message is never taken and then forgotten.
   */
  async ingest(updates: Update[]): Promise<void> {
    if (!this.accepting || updates.length === 0) return;
    const fresh: number[] = [];
    for (const u of updates) {
      if (this.updateLog.has(u.update_id) || fresh.includes(u.update_id)) {
        this.log.info({ updateId: u.update_id }, 'update already processed; ignored');
        continue;
      }
      fresh.push(u.update_id);
      try {
        await this.route(u);
      } catch (err) {
        this.log.error({ err, updateId: u.update_id }, 'update could not be routed');
      }
    }
    await this.updateLog.admit(fresh);
  }

  private async route(update: Update): Promise<void> {
    if ('my_chat_member' in update) {
      const note = await this.groups.added(update.my_chat_member);
      if (note) this.sideReply(note.chatId, note.text);
      return;
    }
    // A button of the bot's (an inline keyboard): the command it carries, typed by the presser.
    const r =
      'callback_query' in update ? pressed(update.callback_query) : readUpdate(update, this.identity!, (chat, album) => this.addressedAlbums.has(chat, album));
    if ('callback_query' in update) void this.bot.telegram.answerCbQuery(update.callback_query.id).catch(() => undefined);
    if (r.kind === 'ignore') {
      this.log.debug({ updateId: update.update_id, reason: r.reason }, 'update ignored');
      return;
    }
    const { sender } = r;
    // A further item of a group album the bot was addressed in: answered with it, not marked again.
    const laterItem = r.kind === 'image' && r.group && r.albumId !== undefined && this.addressedAlbums.has(sender.chatId, r.albumId);
    if (r.kind === 'image' && r.group && r.albumId) this.addressedAlbums.add(sender.chatId, r.albumId);
    if (!r.group && sender.username) this.usernames.set(sender.chatId, sender.username);
    const decision = r.group
      ? await this.groups.admit(sender, r.kind === 'text' ? r.text : undefined, chatLabelOf(messageOf(update), undefined).name)
      : await this.access.check(sender);
    if (!decision.allow) {
      this.log.info({ updateId: update.update_id, userId: sender.userId, chatId: sender.chatId, reason: decision.reason }, 'message refused');
      if (decision.reply) this.sideReply(sender.chatId, decision.reply, r.group ? r.messageId : undefined, r.threadId);
      return;
    }
    const threadId = r.threadId;
    const msg: InboundMessage = {
      channel: this.name,
      chatId: sessionChatId({ chatId: sender.chatId, threadId }),
      userId: sender.userId,
      userName: sender.name ?? sender.username,
      username: sender.username,
      text: '',
      messageId: 'callback_query' in update ? `button-${update.callback_query.id}` : String(r.messageId),
      replyTo: repliedToBot(update, this.identity!),
      receivedAt: new Date(),
      ...translated(r),
      chat: chatLabelOf(messageOf(update), threadId),
      role: await this.roles.roleOf(sender, r.kind === 'text' && parseCommand(r.text) !== null),
    };
    const chatId = sender.chatId;
    const ack = this.opts.telegram.ackReaction;
    // /stop is answered at once, with no turn to show: no 👀 and no "typing…" (a member's flood
    // of /stop, answered once a minute, would otherwise still be one Bot API call each).
    const stop = r.kind === 'text' && isStop(r.text);
    // In a group several people talk at once: the reaction shows whose message is being answered
    // (not a sticker or file without words: that gets one line from the intake).
    const answered = (r.kind !== 'unsupported' || r.caption !== undefined) && !('callback_query' in update);
    if (r.group && ack && !laterItem && !stop && answered) void this.delivery.react(chatId, r.messageId, ack);
    const sendOptions = { replyTo: r.group ? r.messageId : undefined, threadId };
    const stopTyping = stop ? () => undefined : this.typing.start(chatId, threadId);
    const preview = this.preview(chatId, threadId, sendOptions.replyTo, !r.group, msg);
    const reply = replyThrough(this.delivery, chatId, sendOptions, preview, { before: stopTyping, documents: true });
    // The turn is not awaited (it runs in the chat's queue while the next update is routed);
    // its acceptance is: the message is durably journaled before the update counts as taken.
    const handled = this.onMessage!(msg, reply);
    void handled
      .catch((err: unknown) => this.log.error({ err, chatId, updateId: update.update_id }, 'message could not be handed to the app'))
      .finally(() => {
        stopTyping();
        preview?.close();
      });
    await handled.accepted?.catch(() => undefined);
    // Nothing is shown of an answer before its message is durably journaled.
    preview?.start();
  }

  private sideReply(chatId: string, text: string, replyTo?: number, threadId?: number): void {
    const p = this.delivery
      .sendPlain(chatId, text, { replyTo, threadId })
      .catch((err: unknown) => this.log.warn({ err, chatId }, 'reply could not be sent'))
      .finally(() => this.sideReplies.delete(p));
    this.sideReplies.add(p);
  }
}

/**
 * What an update says, in the app's terms (the rest of the InboundMessage is the sender's):
 * text as it is; a voice note as its placeholder and reference (the turn transcribes it); an
 * image as its placeholder, caption and quote (the turn downloads it, or says why not); an
 * album item with its album id (the intake collects the album); anything else named, for the
 * intake to say it cannot read it, or with a caption the caption after a placeholder naming it.
 * No decision here: every message meets the same intake.
 */
function translated(r: Exclude<Inbound, { kind: 'ignore' }>): Partial<InboundMessage> {
  switch (r.kind) {
    case 'text':
      return { text: r.text };
    case 'audio':
      return { text: audioPlaceholder(r.audio, r.caption), audio: r.audio };
    case 'image':
      return r.albumId
        ? { text: albumItemText(r), image: r.image, albumId: r.albumId }
        : { text: withQuote(imagePlaceholder(r.image, r.caption), r.quote), image: r.image };
    case 'unsupported':
      // With words the words are answered (the placeholder tells the model what it did not
      // read); without, the intake says what it cannot read.
      return r.caption ? { text: withQuote(unreadablePlaceholder(r.label, r.caption), r.quote), unreadable: r.what } : { unreadable: r.what };
  }
}

/** The message an update is about: its own, or the bot's message whose button was pressed. */
function messageOf(update: Update): Update.MessageUpdate['message'] {
  return ('callback_query' in update ? update.callback_query.message : (update as Update.MessageUpdate).message) as Update.MessageUpdate['message'];
}

/** A message sent as a reply to one of the bot's own: that message's id (`/why` finds its answer by it). */
function repliedToBot(update: Update, bot: BotIdentity): string | undefined {
  if (!('message' in update)) return undefined;
  const r = (update.message as { reply_to_message?: { message_id: number; from?: { id: number } } }).reply_to_message;
  return r && r.from?.id === bot.id && typeof r.message_id === 'number' ? String(r.message_id) : undefined;
}

/**
 * A pressed button as the text message it stands for: its data is a command (`/why forget …`,
 * core/channel.ts ReplyButton), from the person who pressed it, in the chat of the message it
 * was under. Anything else (a button of an older version, forged data) is ignored.
 */
function pressed(q: Update.CallbackQueryUpdate['callback_query']): Inbound {
  const data = 'data' in q ? q.data : undefined;
  const m = q.message;
  const chat = m?.chat;
  if (!m || !chat || typeof data !== 'string' || !data.startsWith('/')) return { kind: 'ignore', reason: 'a button without a command' };
  const group = chat.type !== 'private';
  const name = [q.from.first_name, q.from.last_name].filter(Boolean).join(' ') || undefined;
  const sender: Sender = { userId: String(q.from.id), username: q.from.username, name, chatId: String(chat.id), chatType: chat.type };
  const topic = m as { message_thread_id?: number; is_topic_message?: boolean };
  return { kind: 'text', sender, text: data, messageId: m.message_id, group, threadId: topic.is_topic_message ? topic.message_thread_id : undefined };
}
