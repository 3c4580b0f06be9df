/**
 * Who may reach the model. Checked for every message before anything else happens to it, so a
 * stranger's text never reaches `app.handle` (and so never the LLM).
 *
 * Private chats, by TELEGRAM_DM_POLICY:
 * - `open`: anyone.
 * - `allowlist`: only TELEGRAM_ALLOWED_USERS (ids or usernames); others get one short refusal.
 * - `pairing` (default): TELEGRAM_ALLOWED_USERS plus users approved with `npm run pair`; a
 *   stranger gets a code once (silence after that while it is pending, and for a day after it
 *   expired unapproved), and the daemon logs the user id and the code for the owner.
 * Refusal messages ("private bot", "no free code") go out at most once per user per hour and
 * at most MAX_REFUSALS_PER_HOUR in all, so a crowd of new accounts cannot make the bot talk.
 * Groups: chats listed in TELEGRAM_ALLOWED_GROUPS and groups an owner approved with /allow
 * (kept in the pairing file; none with MEMORY_SCOPE=global, where the one memory is the owner's).
 * What an unserved group hears is group-gate.ts's to decide.
 */
import type { Logger } from '../../core/log.js';
import type { DmPolicy } from './settings.js';
import type { PairingStore } from './pairing.js';
import { LRUCache } from 'lru-cache';

export interface Sender {
  userId: string;
  username?: string | undefined;
  name?: string | undefined;
  chatId: string;
  chatType: 'private' | 'group' | 'supergroup' | 'channel';
  /**
   * Sent on behalf of a chat rather than a user: `group` — the group itself, i.e. one of its
   * anonymous admins (only an admin can post as the group); `channel` — a member posting as a
   * channel. `userId` is then that chat's id; such a sender is never one of the bot's owners.
   */
  asChat?: 'group' | 'channel' | undefined;
}

export type AccessDecision = { allow: true } | { allow: false; reason: string; reply?: string | undefined };

export interface AccessOptions {
  dmPolicy: DmPolicy;
  /** Numeric ids and lower-case usernames without "@". */
  allowedUsers: string[];
  allowedGroups: string[];
  pairing: PairingStore;
  /** MEMORY_SCOPE=global: groups approved with /allow are not served (the one memory is the owner's). */
  sharedMemory?: boolean | undefined;
  log: Logger;
  /** One refusal per user per this long (ms), so a stranger cannot make the bot spam. */
  refusalIntervalMs?: number;
  /** Refusal messages to all strangers together, per hour. */
  maxRefusalsPerHour?: number;
  now?: () => number;
}

export const MAX_REFUSALS_PER_HOUR = 10;
const HOUR = 3600_000;

export class AccessControl {
  private readonly users: Set<string>;
  private readonly groups: Set<string>;
  /** When each stranger was last told (a crowd of new accounts cannot grow it past its bound). */
  private readonly refusedAt = new LRUCache<string, number>({ max: 10_000 });
  /** When the refusal messages of the last hour went out, oldest first. */
  private readonly refusalTimes: number[] = [];
  private capLoggedAt = -Infinity;
  private readonly now: () => number;

  constructor(private readonly opts: AccessOptions) {
    this.users = new Set(opts.allowedUsers.map((u) => u.toLowerCase()));
    this.groups = new Set(opts.allowedGroups);
    this.now = opts.now ?? Date.now;
  }

  async check(s: Sender): Promise<AccessDecision> {
    if (s.chatType === 'group' || s.chatType === 'supergroup') {
      return (await this.servesGroup(s.chatId))
        ? { allow: true }
        : { allow: false, reason: 'group not served (not in TELEGRAM_ALLOWED_GROUPS, not approved with /allow)' };
    }
    if (s.chatType !== 'private') return { allow: false, reason: `chat type ${s.chatType} is not served` };
    if (this.opts.dmPolicy === 'open' || this.isOwner(s)) return { allow: true };

    if (this.opts.dmPolicy === 'allowlist') {
      return { allow: false, reason: 'not in TELEGRAM_ALLOWED_USERS', reply: this.refusalOnce(s.userId, 'Sorry, this is a private bot.') };
    }

    try {
      if (await this.opts.pairing.isApproved(s.userId)) return { allow: true };
      const r = await this.opts.pairing.request({ userId: s.userId, username: s.username, name: s.name, chatId: s.chatId });
      switch (r.status) {
        case 'approved':
          return { allow: true };
        case 'created':
          this.opts.log.info(
            { userId: s.userId, username: s.username, name: s.name, code: r.code, expiresAt: r.expiresAt },
            `pairing requested by user ${s.userId}${s.username ? ` (@${s.username})` : ''}: approve with "npm run pair -- approve ${r.code}"`,
          );
          return { allow: false, reason: 'pairing code sent', reply: pairingText(r.code) };
        case 'pending':
          return { allow: false, reason: 'pairing pending' };
        case 'cooldown':
          return { allow: false, reason: `pairing code expired unapproved; no new code before ${r.retryAfter}` };
        case 'full': {
          const reply = this.refusalOnce(s.userId, 'This bot is private and cannot take new pairing requests right now. Please try again in an hour.');
          // A warning when the stranger is told, not for every message they send (the backlog
          // in `pair -- list` has them all).
          if (reply) this.opts.log.warn({ userId: s.userId, username: s.username }, 'pairing refused: 3 codes already pending');
          return { allow: false, reason: 'too many pending pairings', reply };
        }
      }
    } catch (err) {
      // Fail closed: a pairing file we cannot read lets nobody new in.
      this.opts.log.error({ err, userId: s.userId }, 'pairing check failed; message refused');
      return { allow: false, reason: 'pairing store unavailable' };
    }
  }

  /**
   * Whether the bot still serves a chat it once served (reminders ask before each delivery): a
   * group while it is in TELEGRAM_ALLOWED_GROUPS; a private chat (its id is the user's) while
   * its user would get in by TELEGRAM_DM_POLICY — open, listed, or approved and not revoked.
   * `username`: the user's handle when known, for a user listed as @username.
   */
  async serves(chatId: string, username?: string): Promise<boolean> {
    if (chatId.startsWith('-')) return this.servesGroup(chatId);
    if (this.opts.dmPolicy === 'open' || this.isOwner({ userId: chatId, username })) return true;
    return this.opts.dmPolicy === 'pairing' && (await this.opts.pairing.isApproved(chatId));
  }

  /** Listed in TELEGRAM_ALLOWED_GROUPS, or approved with /allow. A pairing file that cannot be read serves no approved group (fail closed). */
  async servesGroup(chatId: string): Promise<boolean> {
    if (this.groups.has(chatId)) return true;
    if (this.opts.sharedMemory) return false;
    try {
      return await this.opts.pairing.isGroupApproved(chatId);
    } catch (err) {
      this.opts.log.error({ err, chatId }, 'pairing check failed; group message refused');
      return false;
    }
  }

  /** True when some allowed user is listed by @username only (serves() then needs the handle). */
  get listsUsernames(): boolean {
    return [...this.users].some((u) => !/^\d+$/.test(u));
  }

  /** One of the bot's owners: listed in TELEGRAM_ALLOWED_USERS by id or username (a message sent as a chat is nobody's). */
  isOwner(s: Pick<Sender, 'userId' | 'username' | 'asChat'>): boolean {
    if (s.asChat) return false;
    return this.users.has(s.userId) || (!!s.username && this.users.has(s.username.toLowerCase()));
  }

  private refusalOnce(userId: string, text: string): string | undefined {
    const now = this.now();
    const interval = this.opts.refusalIntervalMs ?? HOUR;
    const last = this.refusedAt.get(userId);
    if (last !== undefined && now - last < interval) return undefined;
    while (this.refusalTimes.length > 0 && now - this.refusalTimes[0]! >= HOUR) this.refusalTimes.shift();
    const cap = this.opts.maxRefusalsPerHour ?? MAX_REFUSALS_PER_HOUR;
    if (this.refusalTimes.length >= cap) {
      if (now - this.capLoggedAt >= HOUR) {
        this.capLoggedAt = now;
        this.opts.log.warn({ cap }, `${cap} refusal messages sent to strangers this hour; others get silence until it has passed (see npm run pair -- list)`);
      }
      return undefined;
    }
    this.refusalTimes.push(now);
    this.refusedAt.set(userId, now);
    return text;
  }
}

export function pairingText(code: string): string {
  return [
    'Hi! This bot is private, so I cannot answer you yet.',
    `Your pairing code: ${code} (valid for 1 hour).`,
    `Send it to the bot's owner; they approve it with: npm run pair -- approve ${code}`,
  ].join('\n');
}
