/**
 * What a channel hands to the daemon, and what of an image the daemon keeps: the shared message
 * types every layer reads (the intake, the turn, sessions, the journal). They live at the bottom
 * so that a channel, the session file and the pipeline agree on one shape without importing
 * each other.
 */

export interface ImageRef {
  /** `photo`: Telegram's compressed photo; `document`: an image sent as a file. */
  kind: 'photo' | 'document';
  fileId: string;
  /** What the channel announced (not trusted: the download checks again). */
  fileSize?: number | undefined;
  width?: number | undefined;
  height?: number | undefined;
  mimeType?: string | undefined;
  fileName?: string | undefined;
}

/** A voice note or audio file that came with a message: transcribed in its turn (features/voice/transcription.ts). */
export interface AudioRef {
  kind: 'voice' | 'audio';
  fileId: string;
  /** What the channel announced (not trusted: the download checks again). */
  fileSize?: number | undefined;
  /** Seconds, as the channel announced them. */
  duration?: number | undefined;
  mimeType?: string | undefined;
  fileName?: string | undefined;
}

/** What a session message keeps of an image or a voice note: enough to fetch it again, nothing of its content. */
export interface StoredAttachment {
  kind: 'photo' | 'document' | 'voice' | 'audio';
  fileId: string;
}

/**
 * What the sender may do in this chat, decided once by the channel before the message is handed
 * over (dispatch/router.ts enforces it; docs/commands.md, "Who may use which command"):
 * - `owner`: one of the bot's owners (TELEGRAM_ALLOWED_USERS), the operator at the terminal, or
 *   the user of a private chat (it is their own chat);
 * - `admin`: a Telegram admin of the group, where GROUP_ADMINS_MANAGE=on;
 * - `member`: anyone else in a group.
 */
export type Role = 'owner' | 'admin' | 'member';

export interface InboundMessage {
  channel: string;
  chatId: string;
  userId: string;
  userName?: string | undefined;
  /** The sender's handle without "@" (Telegram username), when the channel has one. */
  username?: string | undefined;
  text: string;
  /** The channel's own id for this message (Telegram message_id). */
  messageId?: string | undefined;
  /** Sent as a reply to one of the bot's own messages: that message's id (`/why` finds the answer by it). */
  replyTo?: string | undefined;
  receivedAt: Date;
  /** A photo or image file that came with the message (`text` is its placeholder and caption). */
  image?: ImageRef | undefined;
  /**
   * A voice note or audio file (`text` is its untranscribed placeholder with the file id, then
   * the caption): the intake treats it as any message, the turn transcribes it.
   */
  audio?: AudioRef | undefined;
  /**
   * Something the bot cannot read (a sticker, a PDF…), named ("this kind of file"); `text` is
   * empty, or its caption after a placeholder saying it was not read (the reply says so too).
   */
  unreadable?: string | undefined;
  /**
   * The channel's album id (Telegram's media_group_id): items of one album sent together are
   * collected by the intake (dispatch/albums.ts) and answered as one message.
   */
  albumId?: string | undefined;
  /** An album's images, once its items are collected into one message (`text` has one placeholder per image). */
  images?: ImageRef[] | undefined;
  /** The sender's role; unset (an entry journaled by an older version) counts as `member`: fail closed. */
  role?: Role | undefined;
  /** What the channel knows about the chat (its kind and name), kept for the memory page (sessions/names.ts). */
  chat?: ChatLabel | undefined;
}

export type ChatKind = 'private' | 'group' | 'topic';

/**
 * Several people talk in the chat (a group, or a forum topic of one), as the channel says with
 * the chat's kind. A message without one (journaled by an older version, or a channel that does
 * not say): a negative chat id, Telegram's sign of a group.
 */
export function isGroupChat(msg: Pick<InboundMessage, 'chat' | 'chatId'>): boolean {
  return msg.chat ? msg.chat.kind !== 'private' : msg.chatId.startsWith('-');
}

/** What a channel knows about a chat when a message arrives. */
export interface ChatLabel {
  kind: ChatKind;
  /** The user's name, the group's title or the topic's name; absent when the channel did not say. */
  name?: string | undefined;
  /** A topic's group: its chat id in the same channel, and its title when known. */
  group?: { chatId: string; name?: string | undefined } | undefined;
}
