/**
 * Groups the bot does not serve yet (not in TELEGRAM_ALLOWED_GROUPS, not approved): what it says
 * there, and how an owner turns one on from Telegram.
 *
 * - Only the bot's owners (TELEGRAM_ALLOWED_USERS, posting as themselves) are answered there,
 *   and never by the model. The first time an owner addresses the bot in such a group, or adds
 *   the bot to one (a `my_chat_member` update), the bot says there, once, that it stays quiet and
 *   how to turn the group on. "Once" is kept in the pairing file, so a restart does not repeat it.
 * - `/allow` sent there by an owner approves the group at once: kept in the pairing file
 *   (written atomically, under its lock), served from the next message on, also after a
 *   restart; `npm run pair -- list` shows it, `npm run pair -- revoke <group id>` takes it back.
 * - Everyone else gets silence and an info line in the log with the group's id: anyone can add a
 *   bot to a group, so a stranger must not be able to make it talk there (or write to disk).
 * - With MEMORY_SCOPE=global the one memory is the owner's: no group is approved, and the
 *   owner is told why.
 */
import type { ChatMemberUpdated } from 'telegraf/types';
import type { Logger } from '../../core/log.js';
import type { AccessControl, AccessDecision, Sender } from './access.js';
import type { PairingStore } from './pairing.js';
import { parseCommand } from '../../core/command-line.js';

export interface GroupGateOptions {
  access: AccessControl;
  pairing: PairingStore;
  /** MEMORY_SCOPE=global. */
  sharedMemory: boolean;
  log: Logger;
}

export class GroupGate {
  constructor(private readonly opts: GroupGateOptions) {}

  /**
   * A message addressed to the bot in a group: an owner's `/allow` is handled here (never handed
   * on); anything else gets the access decision, with the once-per-group note for an owner in an
   * unserved group. `text`: the message's text, if it is text.
   */
  async admit(sender: Sender, text: string | undefined, title: string | undefined): Promise<AccessDecision> {
    const owner = this.opts.access.isOwner(sender);
    if (owner && text !== undefined && parseCommand(text)?.name === 'allow') return this.allow(sender, title);
    const decision = await this.opts.access.check(sender);
    if (decision.allow || !owner) return decision;
    return { ...decision, reply: await this.tellOnce(sender.chatId, title) };
  }

  /** The bot's own membership changed. Added to an unserved group by an owner: the note to post there (once). */
  async added(u: ChatMemberUpdated): Promise<{ chatId: string; text: string } | undefined> {
    const chatId = String(u.chat.id);
    const joined = ['member', 'administrator'].includes(u.new_chat_member.status) && ['left', 'kicked'].includes(u.old_chat_member.status);
    if ((u.chat.type !== 'group' && u.chat.type !== 'supergroup') || !joined) return undefined;
    if (await this.opts.access.servesGroup(chatId)) return undefined;
    const title = u.chat.title;
    if (!this.opts.access.isOwner({ userId: String(u.from.id), username: u.from.username })) {
      this.opts.log.info(
        { chatId, title, userId: String(u.from.id) },
        `added to group ${chatId}, which is not served, by someone who is not an owner; staying quiet there`,
      );
      return undefined;
    }
    const text = await this.tellOnce(chatId, title);
    return text ? { chatId, text } : undefined;
  }

  private async allow(sender: Sender, title: string | undefined): Promise<AccessDecision> {
    const chatId = sender.chatId;
    const refused = (reason: string, reply: string): AccessDecision => ({ allow: false, reason, reply });
    if (this.opts.sharedMemory) return refused('/allow refused: MEMORY_SCOPE=global', sharedMemoryText(chatId));
    if (await this.opts.access.servesGroup(chatId)) {
      return refused('/allow in a served group', 'This group is already served: anyone here can talk to me by mentioning me or replying to me.');
    }
    try {
      await this.opts.pairing.approveGroup({ chatId, title, by: sender.userId });
    } catch (err) {
      this.opts.log.error({ err, chatId }, 'the group approval could not be saved');
      return refused(
        '/allow could not be saved',
        `I could not save the approval, so this group is still not served. Try /allow again, or add ${chatId} to TELEGRAM_ALLOWED_GROUPS.`,
      );
    }
    this.opts.log.info({ chatId, title, by: sender.userId }, `group ${chatId} approved by an owner with /allow`);
    return refused(
      'group approved with /allow',
      `✅ This group is served now: anyone here can talk to me by mentioning me or replying to me. To undo it: npm run pair -- revoke ${chatId}`,
    );
  }

  /** The note for an owner in an unserved group, the first time only (undefined after that, or when it cannot be recorded). */
  private async tellOnce(chatId: string, title: string | undefined): Promise<string | undefined> {
    try {
      if (!(await this.opts.pairing.markTold({ chatId, title }))) return undefined;
    } catch (err) {
      // Better silent than repeating the note on every message.
      this.opts.log.error({ err, chatId }, 'pairing file unreadable; the owner is not told how to serve this group');
      return undefined;
    }
    this.opts.log.info({ chatId, title }, `told the owner in group ${chatId} how to turn it on (/allow)`);
    if (this.opts.sharedMemory) return sharedMemoryText(chatId);
    return `This group isn't served yet, so I stay quiet here. You are my owner: send /allow here to let everyone in it talk to me (or add its id, ${chatId}, to TELEGRAM_ALLOWED_GROUPS).`;
  }
}

function sharedMemoryText(chatId: string): string {
  return `I serve no group: I keep one memory, my owner's (MEMORY_SCOPE=global), and everyone here could read it. To use me here, set MEMORY_SCOPE=chat and restart, then send /allow here (group id ${chatId}).`;
}
