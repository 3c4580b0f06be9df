/**
 * The sender's role (core/message.ts), decided once per message before it is handed to the app;
 * the command router enforces it (dispatch/router.ts).
 *
 * - A private chat is its user's own chat: `owner` (they already passed TELEGRAM_DM_POLICY).
 * - In a group the bot's owners (TELEGRAM_ALLOWED_USERS) are `owner`s; with
 *   GROUP_ADMINS_MANAGE=on the group's Telegram admins (status creator or administrator, asked
 *   with getChatMember) are `admin`s; everyone else is a `member`.
 * - A message the group sent as itself comes from one of its anonymous admins (Telegram lets
 *   only admins post as the group, and hides which one): with GROUP_ADMINS_MANAGE=on an `admin`
 *   for a command, without a lookup — as an admin posting as themselves; else a `member`. Never
 *   an `owner`: who is behind it is unknown. A member posting as a channel is a `member`, never
 *   looked up (its id is the channel's, not a person's).
 *
 * An admin is looked up only for a command (a role decides nothing else), and the answer is kept
 * per (group, user) for 10 minutes in a bounded cache, so a busy group costs one call per person
 * every 10 minutes. A lookup that fails counts as "not an admin" (fail closed), is logged, and is
 * asked again after a minute. A lookup holds the updates behind it for at most its timeout.
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from '../../core/log.js';
import type { Role } from '../../core/message.js';
import type { Sender } from './access.js';
import { toTelegramAppError } from './errors.js';

export const ADMIN_TTL_MS = 10 * 60_000;
const FAILED_TTL_MS = 60_000;
const MAX_CACHED = 10_000;

export interface ChatRolesOptions {
  /** GROUP_ADMINS_MANAGE. */
  adminsManage: boolean;
  isOwner: (s: Sender) => boolean;
  /** The user's status in the chat (getChatMember); throws when Telegram cannot say. */
  memberStatus: (chatId: string, userId: string) => Promise<string>;
  log: Logger;
}

export class ChatRoles {
  /** `chatId:userId` → whether that user is an admin of that group. */
  private readonly admins = new LRUCache<string, boolean>({ max: MAX_CACHED, ttl: ADMIN_TTL_MS });

  constructor(private readonly opts: ChatRolesOptions) {}

  /** `command`: the message is a command (only then is an admin looked up). */
  async roleOf(s: Sender, command: boolean): Promise<Role> {
    if (s.chatType === 'private' || this.opts.isOwner(s)) return 'owner';
    if (!this.opts.adminsManage || !command) return 'member';
    if (s.asChat) return s.asChat === 'group' ? 'admin' : 'member';
    return (await this.isAdmin(s.chatId, s.userId)) ? 'admin' : 'member';
  }

  private async isAdmin(chatId: string, userId: string): Promise<boolean> {
    const key = `${chatId}:${userId}`;
    const known = this.admins.get(key);
    if (known !== undefined) return known;
    try {
      const status = await this.opts.memberStatus(chatId, userId);
      const admin = status === 'creator' || status === 'administrator';
      this.admins.set(key, admin);
      return admin;
    } catch (err) {
      const e = toTelegramAppError(err, 'getChatMember');
      this.opts.log.warn(
        { code: e.code, chatId, userId, err: e.message },
        'getChatMember failed, so the sender counts as a member (not a group admin) for this command',
      );
      this.admins.set(key, false, { ttl: FAILED_TTL_MS });
      return false;
    }
  }
}
